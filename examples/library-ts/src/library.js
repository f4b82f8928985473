// The library contract: one tool, one resource, one resource template, one prompt.
// Tools return fixed data: only the contract matters to the suites that run against it.
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";

export const ISBN = "978-0-00-000000-2";
export const INSTRUCTIONS = "Book lookup for a small library. Use find_book for a title.";

export function buildServer() {
  const server = new McpServer({ name: "library-ts", version: "1" }, { instructions: INSTRUCTIONS });

  server.registerTool(
    "find_book",
    {
      description: "Look up a book by title and return its ISBN.",
      inputSchema: { title: z.string().describe("The book's title") },
      outputSchema: { isbn: z.string() },
    },
    async () => {
      const book = { isbn: ISBN };
      return { content: [{ type: "text", text: JSON.stringify(book) }], structuredContent: book };
    },
  );

  server.registerResource(
    "catalog",
    "library://catalog",
    { description: "The whole catalog as a JSON list of ISBNs.", mimeType: "application/json" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify([ISBN]) }] }),
  );

  server.registerResource(
    "book",
    new ResourceTemplate("library://books/{isbn}", { list: undefined }),
    { description: "One book's record by ISBN.", mimeType: "application/json" },
    async (uri, { isbn }) => ({
      contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify({ isbn }) }],
    }),
  );

  server.registerPrompt(
    "recommend",
    { description: "Ask for a recommendation in a genre.", argsSchema: { genre: z.string() } },
    ({ genre }) => ({
      messages: [{ role: "user", content: { type: "text", text: `Recommend one ${genre} book from the library catalog.` } }],
    }),
  );

  return server;
}
