/**
 * MCP resources as the model sees them: listings of resources and templates from several servers as one JSON text,
 * and the contents of a read resource as pi content (text, images) plus the binary parts to be saved to files, with
 * a safe file name for each. Pure.
 */
import type {
  ReadResourceResult,
  Resource,
  ResourceTemplateType as ResourceTemplate,
} from "@modelcontextprotocol/client";
import { formatBytes, mediaType } from "../common/text.ts";
import { base64Size, MODEL_IMAGES_MAX_BASE64, type PiContent, resourceParts } from "./output.ts";

/** One server's page of a listing, or why it could not be listed. */
export type ServerPage<T> = { server: string; items: T[]; nextCursor?: string } | { server: string; error: string };

/** A listing as the model gets it: every item names its server; more pages and failures are said plainly. */
export function formatListing<T extends Resource | ResourceTemplate>(
  key: "resources" | "resourceTemplates",
  pages: ServerPage<T>[],
): string {
  const items: Array<Record<string, unknown>> = [];
  const more: Array<{ server: string; cursor: string }> = [];
  const errors: Array<{ server: string; error: string }> = [];
  for (const page of pages) {
    if ("error" in page) {
      errors.push({ server: page.server, error: page.error });
      continue;
    }
    // The server's name is the bridge's to give: an item's own `server` field does not replace it.
    for (const item of page.items) items.push({ ...(item as Record<string, unknown>), server: page.server });
    if (page.nextCursor) more.push({ server: page.server, cursor: page.nextCursor });
  }
  const next = { nextCursors: more, note: "More items exist: call again with `server` and that server's `cursor`." };
  // The next pages and the failures come first: a listing too long for a tool result is cut at its end, not its head.
  const listing = { ...(more.length > 0 && next), ...(errors.length > 0 && { errors }), [key]: items };
  return JSON.stringify(listing, null, 2);
}

/** A binary part of a resource, to be saved to a file whose path the model is told. */
interface BinaryPart {
  uri: string;
  mimeType: string;
  /** Base64, as the server sent it. */
  data: string;
  fileName: string;
  /** The index in `content` of the line that stands for it, for the caller to add where it was saved. */
  at: number;
}

export interface ResourceOutput {
  /** In the server's order: a text part per text (or text-typed) content, an image part per image. */
  content: PiContent[];
  /** Content that is neither text nor an image a model takes; `content` holds a placeholder line for each. */
  binaries: BinaryPart[];
}

/** Extensions for binary types a user is likely to open; any other gets `.bin`. */
const EXTENSIONS: Record<string, string> = {
  "application/gzip": ".gz",
  "application/zip": ".zip",
  "application/pdf": ".pdf",
  "application/octet-stream": ".bin",
  "image/svg+xml": ".svg",
  "image/bmp": ".bmp",
  "image/tiff": ".tiff",
  "audio/mpeg": ".mp3",
  "audio/wav": ".wav",
};

/**
 * A file name for a resource's content, from the last segment of its URI: only letters, digits, `_`, `-` and `.`,
 * never starting with a dot, at most 80 characters, never a path (the server chooses the URI, not where it is saved).
 */
export function resourceFileName(uri: string, mimeType: string, index = 0): string {
  const lastSegment =
    uri
      .replace(/[?#].*$/, "")
      .split(/[/\\:]/)
      .filter(Boolean)
      .pop() ?? "";
  let decoded = lastSegment;
  try {
    decoded = decodeURIComponent(lastSegment);
  } catch {
    // A malformed escape: the segment as it is.
  }
  let base = decoded.replace(/[^A-Za-z0-9_.-]/g, "_").replace(/^[.]+/, "") || "resource";
  if (/^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/i.test(base)) base = `_${base}`; // a Windows device, not a file
  if (index > 0) base = `${index + 1}-${base}`;
  // The whole name stays within 80 characters: what the URI gave is cut, not the extension.
  const own = /\.[A-Za-z0-9]{1,8}$/.exec(base)?.[0] ?? "";
  const type = mediaType(mimeType);
  const extension = own || (Object.hasOwn(EXTENSIONS, type) && EXTENSIONS[type]) || ".bin";
  return `${base.slice(0, base.length - own.length).slice(0, 80 - extension.length)}${extension}`;
}

/** The contents of `resources/read` as pi content; binary parts are left for the caller to save. */
export function resourceOutput(contents: ReadResourceResult["contents"]): ResourceOutput {
  const content: PiContent[] = [];
  const binaries: BinaryPart[] = [];
  const names = new Set<string>();
  let imageBytes = 0;
  contents.forEach((part, index) => {
    let { uri, header, text, image, blob } = resourceParts(part);
    // Images past what one request takes are saved as files, as other binary parts are; only those shown count.
    if (image && imageBytes + image.data.length > MODEL_IMAGES_MAX_BASE64)
      [image, blob] = [undefined, { data: image.data, mimeType: image.mimeType }];
    else if (image) imageBytes += image.data.length;
    if (text !== undefined) content.push({ type: "text", text: `${header}\n${text}` });
    else if (image) content.push({ type: "text", text: header }, image);
    else if (blob) {
      const { data, mimeType = "application/octet-stream" } = blob;
      let fileName = resourceFileName(uri, mimeType);
      // Unique without regard to case: names that differ only in it are one file on macOS and Windows.
      for (let n = index; names.has(fileName.toLowerCase()); n++) fileName = resourceFileName(uri, mimeType, n);
      names.add(fileName.toLowerCase());
      binaries.push({ uri, mimeType, data, fileName, at: content.length });
      content.push({ type: "text", text: `${header}: binary, ${formatBytes(base64Size(data))}` });
    } else content.push({ type: "text", text: `${header}: no content` });
  });
  if (content.length === 0) content.push({ type: "text", text: "(the resource has no contents)" });
  return { content, binaries };
}
