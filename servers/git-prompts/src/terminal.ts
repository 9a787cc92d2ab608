import {
  escapeTerminalControls,
  type AnyToolDefinition,
  type ContentBlock,
  type PromptDefinition,
  type PromptMessage,
  type ResourceContents,
  type ResourceTemplateDefinition,
  type ToolFactory,
} from '@suite/shared';

/**
 * What this server sends as text (tool answers, resources, prompts) comes from repositories: file
 * names, commit messages, diffs, file contents. Many clients print it to a terminal, where ESC, an
 * OSC hyperlink, BEL, a bare CR or NUL would act instead of showing. Every such control is written
 * as a visible escape (`\x1b`), once, at the edge where answers leave the server, so no tool,
 * resource or prompt can forget it. CR LF line ends stay as they are: they move nothing a
 * terminal shows, and a diff of a CRLF file stays readable. Structured tool output (JSON) is left
 * as data: JSON already carries a control character as `\u001b`.
 */
export function terminalSafe(text: string): string {
  if (!text.includes('\r')) return escapeTerminalControls(text);
  return text
    .split('\r\n')
    .map((part) => escapeTerminalControls(part))
    .join('\r\n');
}

function safeContents(contents: ResourceContents): ResourceContents {
  return 'text' in contents ? { ...contents, text: terminalSafe(contents.text) } : contents;
}

function safeBlock(block: ContentBlock): ContentBlock {
  if (block.type === 'text') return { ...block, text: terminalSafe(block.text) };
  if (block.type === 'resource') return { ...block, resource: safeContents(block.resource) };
  return block;
}

/** A tool whose text answer (and content blocks) reach the client escaped. */
export function safeTool<C>(make: (config: C) => AnyToolDefinition): ToolFactory<C> {
  return (config) => {
    const tool = make(config);
    // The reply keeps its shape (text, content blocks, structured output); only its text changes.
    type Reply = string | { text: string; structured?: unknown } | { content: ContentBlock[]; structured?: unknown };
    const handler = async (...call: Parameters<AnyToolDefinition['handler']>): Promise<Reply> => {
      const reply = (await tool.handler(...call)) as Reply;
      if (typeof reply === 'string') return terminalSafe(reply);
      if ('text' in reply) return { ...reply, text: terminalSafe(reply.text) };
      return { ...reply, content: reply.content.map(safeBlock) };
    };
    return { ...tool, handler } as unknown as AnyToolDefinition;
  };
}

/** A resource template whose text contents reach the client escaped. */
export function safeTemplate(template: ResourceTemplateDefinition): ResourceTemplateDefinition {
  return {
    ...template,
    read: async (uri, variables, ctx) => {
      const contents = await template.read(uri, variables, ctx);
      return Array.isArray(contents) ? contents.map(safeContents) : safeContents(contents);
    },
  };
}

/** A prompt whose messages (and embedded resources) and description reach the client escaped. */
export function safePrompt<P extends PromptDefinition>(prompt: P): P {
  return {
    ...prompt,
    get: async (args: Parameters<P['get']>[0], ctx: Parameters<P['get']>[1]) => {
      const result = await prompt.get(args, ctx);
      return {
        ...result,
        ...(result.description !== undefined ? { description: terminalSafe(result.description) } : {}),
        messages: result.messages.map((message: PromptMessage) => ({ ...message, content: safeBlock(message.content) })),
      };
    },
  };
}
