/**
 * One server, several named targets (databases): every tool gains an optional argument that names
 * the target, and the call goes to that target's own definition of the tool (its pool, its mode,
 * its limits). The names are an enum in the tool's JSON Schema, so clients and models see (and
 * complete) exactly the configured ones; a name not configured is invalid arguments naming them.
 */
import { z } from 'zod';
import { ToolError } from '../core/errors.js';
import type { AnyToolDefinition } from './tools.js';

export interface NamedTargets {
  /** The argument's name, e.g. "database". */
  argument: string;
  /** What the argument is, for its description, e.g. "database". */
  noun: string;
  /** Each target's name and its tools, the default first. */
  targets: readonly { name: string; tools: readonly AnyToolDefinition[] }[];
}

/**
 * Merges each target's tools into one list. A tool some targets lack (a writing tool on a
 * read-only database) is still listed when any target has it, and a call naming a target
 * without it is refused with a message that says why.
 */
export function toolsForNamedTargets({ argument, noun, targets }: NamedTargets): AnyToolDefinition[] {
  const [first] = targets;
  if (!first) throw new Error('toolsForNamedTargets: no targets');
  const names = targets.map((t) => t.name) as [string, ...string[]];
  const byTool = new Map<string, Map<string, AnyToolDefinition>>();
  for (const target of targets) {
    for (const tool of target.tools) {
      if (!byTool.has(tool.name)) byTool.set(tool.name, new Map());
      byTool.get(tool.name)!.set(target.name, tool);
    }
  }
  const selector = z
    .enum(names)
    .optional()
    .describe(`Which ${noun} (default ${first.name}): ${names.join(', ')}.`);
  const merged: AnyToolDefinition[] = [];
  for (const [toolName, perTarget] of byTool) {
    const model = perTarget.values().next().value!;
    const withSelector = model.input.safeExtend({ [argument]: selector }) as z.ZodObject;
    merged.push({
      ...model,
      input: withSelector,
      handler: async (args, ctx) => {
        const { [argument]: chosen, ...rest } = args as Record<string, unknown>;
        const name = typeof chosen === 'string' ? chosen : first.name;
        const tool = perTarget.get(name);
        if (!tool) {
          throw ToolError.invalidArgument(`${toolName} is not available for the ${noun} ${name}${perTarget.size ? ` (it is available for: ${[...perTarget.keys()].join(', ')})` : ''}.`);
        }
        return tool.handler(rest, ctx);
      },
    });
  }
  return merged;
}

export interface NamedTargetTools<C extends object> {
  argument: string;
  noun: string;
  /** One target's tools. */
  tools: (config: C) => readonly AnyToolDefinition[];
  /** The configured targets by name, the default first; fewer than two means a single target. */
  targets: (config: C) => ReadonlyMap<string, C> | undefined;
}

/**
 * A server's tools for a configuration: a single target's own list, or every target's tools merged
 * under the selecting argument. The merge is built once per configuration object, not per session:
 * sessions come and go at request rate over HTTP and the merged schemas never change.
 */
export function namedTargetTools<C extends object>({ argument, noun, tools, targets }: NamedTargetTools<C>): (config: C) => readonly AnyToolDefinition[] {
  const merged = new WeakMap<C, readonly AnyToolDefinition[]>();
  return (config) => {
    const several = targets(config);
    if (!several || several.size < 2) return tools(config);
    let list = merged.get(config);
    if (!list) {
      list = toolsForNamedTargets({ argument, noun, targets: [...several].map(([name, c]) => ({ name, tools: tools(c) })) });
      merged.set(config, list);
    }
    return list;
  };
}
