import { z } from 'zod';
import { ToolError, UsageError } from '../core/errors.js';
import type { ToolAnnotations, ToolDefinition } from './tools.js';

/** A named group of tools a user can switch on or off (`--toolsets repos,issues`). */
export interface ToolsetInfo {
  name: string;
  description: string;
  /** On when the user names no toolsets. */
  default?: boolean;
}

/**
 * Which tools a session exposes. Read-only mode wins over everything: it removes every tool whose
 * `readOnlyHint` is false, whichever toolset or `--tools` entry asked for it.
 */
export interface ToolSelection {
  readOnly?: boolean;
  /** Toolset names; `all` means every toolset, `default` the default ones. Omitted: the defaults. */
  toolsets?: readonly string[];
  /** Individual tools, on top of the toolsets. Given without `toolsets`, only these tools are on. */
  tools?: readonly string[];
  /** Start with no toolset on (beyond those named) and let the model enable them with meta-tools. */
  dynamic?: boolean;
}

type AnyTool = Pick<ToolDefinition<z.ZodObject, z.ZodObject | undefined>, 'name' | 'toolset' | 'annotations' | 'description'>;

/**
 * The decision of what is registered, kept as data: the server asks `allows(tool)` and never a tool
 * itself checks a flag.
 */
export class ToolGate {
  readonly readOnly: boolean;
  dynamic: boolean;
  private readonly requestedToolsets: boolean;
  private readonly enabled = new Set<string>();
  private readonly extraTools: ReadonlySet<string>;

  constructor(
    readonly toolsets: readonly ToolsetInfo[],
    selection: ToolSelection = {},
  ) {
    this.readOnly = selection.readOnly === true;
    this.dynamic = selection.dynamic === true;
    this.extraTools = new Set(selection.tools ?? []);
    const known = new Set(toolsets.map((t) => t.name));
    const requested = selection.toolsets;
    this.requestedToolsets = requested !== undefined;
    for (const name of requested ?? []) {
      if (name !== 'all' && name !== 'default' && !known.has(name)) throw new UsageError(unknownToolsetMessage(name, toolsets));
    }
    if (requested !== undefined) {
      for (const name of requested) {
        if (name === 'all') toolsets.forEach((t) => this.enabled.add(t.name));
        else if (name === 'default') toolsets.filter((t) => t.default).forEach((t) => this.enabled.add(t.name));
        else this.enabled.add(name);
      }
    } else if (!this.dynamic && this.extraTools.size === 0) {
      toolsets.filter((t) => t.default).forEach((t) => this.enabled.add(t.name));
    }
  }

  /** Whether a tool's toolset (or the tool itself) is switched on; read-only mode is applied separately. */
  /**
   * For the 2026-07-28 era, where each request stands alone: a toolset enabled by one request would
   * be gone at the next, so dynamic mode ends here and the selection is what the flags (or, when
   * they name none, the default toolsets) say. Returns whether dynamic mode was on.
   */
  endDynamicMode(): boolean {
    if (!this.dynamic) return false;
    this.dynamic = false;
    if (!this.requestedToolsets && this.extraTools.size === 0) this.toolsets.filter((t) => t.default).forEach((t) => this.enabled.add(t.name));
    return true;
  }

  selected(tool: AnyTool): boolean {
    return tool.toolset === undefined || this.enabled.has(tool.toolset) || this.extraTools.has(tool.name);
  }

  /** Whether read-only mode leaves this tool in. */
  permitted(tool: AnyTool): boolean {
    return !this.readOnly || tool.annotations.readOnlyHint;
  }

  allows(tool: AnyTool): boolean {
    return this.permitted(tool) && this.selected(tool);
  }

  isEnabled(toolset: string): boolean {
    return this.enabled.has(toolset);
  }

  /** Switches a toolset on (`all`: every one, `default`: the default ones); false when nothing was off. */
  enable(toolset: string): boolean {
    const names =
      toolset === 'all' ? this.toolsets.map((t) => t.name) : toolset === 'default' ? this.toolsets.filter((t) => t.default).map((t) => t.name) : [toolset];
    if (toolset !== 'all' && toolset !== 'default' && !this.toolsets.some((t) => t.name === toolset)) throw ToolError.invalidArgument(unknownToolsetMessage(toolset, this.toolsets));
    const off = names.filter((name) => !this.enabled.has(name));
    for (const name of off) this.enabled.add(name);
    return off.length > 0;
  }

  /** The toolsets switched on, by name (what a 2025 session carries to another replica). */
  enabledToolsets(): string[] {
    return [...this.enabled];
  }

  /** Names given with `--tools` that no registered tool has (a typo the user should hear about). */
  unknownTools(registered: Iterable<string>): string[] {
    const names = new Set(registered);
    return [...this.extraTools].filter((n) => !names.has(n));
  }
}

function unknownToolsetMessage(name: string, toolsets: readonly ToolsetInfo[]): string {
  return `Unknown toolset ${JSON.stringify(name)}. Available: ${toolsets.map((t) => t.name).join(', ')} (or all, default).`;
}

/** What the dynamic-toolset meta-tools need from the server. */
export interface ToolsetHost {
  gate: ToolGate;
  /** Every registered tool, whether exposed or not. */
  allTools(): AnyTool[];
  /** Switches a toolset on for this session and tells the client its tool list changed. */
  enableToolset(name: string): string[];
}

const META: Omit<ToolAnnotations, 'title'> = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

const TOOLSET_ARG = z.object({ toolset: z.string().min(1).max(100).describe('A toolset name from list_available_toolsets.') });

/**
 * The three meta-tools of dynamic mode: the model sees only these at first, and enables what the
 * task needs; the tool list then grows with `notifications/tools/list_changed`. They answer in text
 * only: an output schema would triple what they cost in the model's context before any real tool.
 */
export function dynamicToolsetTools(host: ToolsetHost): ToolDefinition<z.ZodObject>[] {
  const permittedIn = (toolset: string): AnyTool[] => host.allTools().filter((t) => t.toolset === toolset && host.gate.permitted(t));
  const list: ToolDefinition<z.ZodObject<Record<string, never>>> = {
    name: 'list_available_toolsets',
    description: 'Lists the toolsets this server offers, whether each is enabled, and how many tools it has. Enable one with enable_toolset.',
    input: z.object({}),
    annotations: { title: 'List available toolsets', ...META },
    handler: async () =>
      host.gate.toolsets
        .map((t) => `${t.name}${host.gate.isEnabled(t.name) ? ' (enabled)' : ''}: ${t.description} [${permittedIn(t.name).length} tools]`)
        .join('\n'),
  };
  const describe: ToolDefinition<typeof TOOLSET_ARG> = {
    name: 'get_toolset_tools',
    description: 'Lists the tools of one toolset with their descriptions, so you can decide whether to enable it.',
    input: TOOLSET_ARG,
    annotations: { title: 'Describe a toolset', ...META },
    handler: async ({ toolset }) => {
      if (!host.gate.toolsets.some((t) => t.name === toolset)) throw ToolError.invalidArgument(unknownToolsetMessage(toolset, host.gate.toolsets));
      const tools = permittedIn(toolset).map((t) => `- ${t.name}${t.annotations.readOnlyHint ? '' : ' (writes)'}: ${firstLine(t.description)}`);
      return [`${toolset}${host.gate.isEnabled(toolset) ? ' (enabled)' : ''}:`, ...tools].join('\n');
    },
  };
  const enable: ToolDefinition<typeof TOOLSET_ARG> = {
    name: 'enable_toolset',
    description: 'Enables a toolset for this session: its tools are added to your tool list (read-only mode still applies).',
    input: TOOLSET_ARG,
    annotations: { title: 'Enable a toolset', ...META },
    handler: async ({ toolset }) => {
      const added = host.enableToolset(toolset);
      return added.length > 0 ? `Enabled ${toolset}: ${added.join(', ')} are now available.` : `${toolset} was already enabled; no tools were added.`;
    },
  };
  return [list, describe, enable] as unknown as ToolDefinition<z.ZodObject>[];
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}
