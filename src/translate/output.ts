/**
 * MCP tool results → pi tool content. Pure.
 */
import { decodedText, isTextMime } from "../common/redact.ts";
import { formatBytes, mediaType } from "../common/text.ts";
import { isObject, type JsonObject } from "../common/values.ts";

export type PiContent = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

/** The parts of an MCP `CallToolResult` this module reads; loose on purpose, since servers send what they send. */
export interface McpToolResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
  toolResult?: unknown;
}

export interface NormalizedResult {
  /** Text first (all text-like parts joined by newlines), then images. */
  content: PiContent[];
  /** The joined text alone. */
  text: string;
  isError: boolean;
}

/** Image types every pi provider accepts; others are described instead of sent. */
const MODEL_IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** A type as providers name it: no parameters, no case, and `image/jpg` (often written) is `image/jpeg`. */
const imageType = (mime: string) => mediaType(mime).replace(/^image\/jpg$/, "image/jpeg");

/**
 * The type an image's bytes are, where they are one a model takes (a provider refuses an image sent as another: 'Image
 * does not match the provided media type'); else the type it was sent as.
 */
function imageBytesType(data: string, declared: string): string {
  const head = Buffer.from(data.slice(0, 16), "base64").toString("latin1");
  const [, png, jpeg, gif, webp] = /^(?:(\x89PNG)|(\xff\xd8\xff)|(GIF8)|(RIFF[^]{4}WEBP))/.exec(head) ?? [];
  return png ? "image/png" : jpeg ? "image/jpeg" : gif ? "image/gif" : webp ? "image/webp" : declared;
}

/** The base64 of one image a provider takes (Anthropic's bound is 5 MB; pi's own tools keep under this). */
const MODEL_IMAGE_MAX_BASE64 = 4.5 * 1024 * 1024;
/** The base64 of all images of one result: a provider refuses a whole request over 20–32 MB, images and all. */
export const MODEL_IMAGES_MAX_BASE64 = 3 * MODEL_IMAGE_MAX_BASE64;
export const OVER_TOTAL = `: with it, this result's images would be over the ${formatBytes(MODEL_IMAGES_MAX_BASE64)} of base64 one request takes`;

/**
 * Base64 as providers take it: one line (Python's base64.encodebytes wraps it), and without the `data:…;base64,` some
 * servers put before it (a provider refuses that request, and every later one that carries it).
 */
const base64Of = (text: string): string => text.replace(/\s/g, "").replace(/^data:[^,]*;base64,/i, "");
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Why a provider would not take an image with this data (one line of base64, as `base64Of` gives it) and type: the
 * words for the note that stands in for it ("" for a type none takes, or no data), or undefined where it would.
 */
function imageRefusal(data: string, mime: string): string | undefined {
  // One image over a provider's bound fails the whole request, and every later one of the session.
  if (data.length > MODEL_IMAGE_MAX_BASE64)
    return `: ${formatBytes(data.length)} as base64, over the ${formatBytes(MODEL_IMAGE_MAX_BASE64)} providers take`;
  // Nor do they take data that is not base64 (a URL sent where the bytes belong).
  if (!BASE64.test(data)) return ": its data is not base64";
  return MODEL_IMAGE_TYPES.has(mime) && data ? undefined : "";
}

/** Why `modelImage` takes no image with this data and type, in words after "not shown" ("" for a type none takes). */
export const imageRefusalOf = (data: string, declared: string) => imageRefusal(base64Of(data), imageType(declared));

/** An image as a provider takes it (its type as its bytes say), or none where `imageRefusal` says it would not. */
export function modelImage(data: string, declared: string): (PiContent & { type: "image" }) | undefined {
  const [mime, clean] = [imageType(declared), base64Of(data)];
  return imageRefusal(clean, mime) === undefined
    ? { type: "image", data: clean, mimeType: imageBytesType(clean, mime) }
    : undefined;
}

const isEmpty = (text: string): boolean => text === "";

/** Size in bytes of base64 data, without decoding it. */
export function base64Size(data: string): number {
  const trimmed = data.replace(/\s/g, "");
  const padding = trimmed.endsWith("==") ? 2 : trimmed.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((trimmed.length * 3) / 4) - padding);
}

/**
 * A resource as the model takes it (embedded in a result, or read; loose on purpose, as servers send what they send):
 * the line that names it, and its text (a blob of a text type decoded) or its image; `blob` is binary content of any
 * other type, which the model is not sent.
 */
export function resourceParts(part: JsonObject) {
  const uri = String(part.uri ?? "");
  const declared = typeof part.mimeType === "string" ? part.mimeType : undefined;
  const mime = declared === undefined ? undefined : imageType(declared);
  const header = `[resource] ${uri}${mime ? ` (${mime})` : ""}`;
  if (typeof part.text === "string") return { uri, header, text: part.text };
  // No bytes is no content: an empty image would fail every later request of the session that holds it.
  if (typeof part.blob !== "string" || !part.blob.trim()) return { uri, header };
  const image = mime && modelImage(part.blob, mime);
  if (image) return { uri, header, image };
  if (isTextMime(mime)) return { uri, header, text: decodedText(part.blob, declared!) };
  return { uri, header, blob: { data: part.blob, mimeType: mime } };
}

/** The line for a `resource_link`; with the server that sent it, so the model knows where to read it. */
function describeResourceLink(part: JsonObject, server: string | undefined): string {
  const name = typeof part.title === "string" ? part.title : typeof part.name === "string" ? part.name : "";
  const bits = [`[resource link] ${String(part.uri ?? "")}`];
  if (name) bits.push(`(${name})`);
  if (typeof part.mimeType === "string") bits.push(part.mimeType);
  let line = bits.join(" ");
  if (typeof part.description === "string" && part.description) line += ` — ${part.description}`;
  if (server !== undefined) line += ` (MCP server '${server}': read it with read_mcp_resource)`;
  return line;
}

/** `server` is the MCP server that answered, named in the lines for the resources it links to. */
export function normalizeToolResult(result: McpToolResult, server?: string): NormalizedResult {
  const texts: string[] = [];
  const images: PiContent[] = [];
  let imageBytes = 0;
  const parts = Array.isArray(result.content) ? result.content : [];
  for (const part of parts) {
    if (!isObject(part)) continue;
    switch (part.type) {
      case "text":
        if (typeof part.text === "string") texts.push(part.text);
        break;
      case "image":
      case "audio": {
        const image = part.type === "image";
        const mime =
          typeof part.mimeType === "string" ? imageType(part.mimeType) : image ? "application/octet-stream" : "audio";
        const data = typeof part.data === "string" ? base64Of(part.data) : "";
        const why = image ? imageRefusal(data, mime) : "";
        const overTotal = why === undefined && imageBytes + data.length > MODEL_IMAGES_MAX_BASE64;
        if (why === undefined && !overTotal) {
          images.push({ type: "image", data, mimeType: imageBytesType(data, mime) });
          imageBytes += data.length;
        } else {
          texts.push(`[${part.type}: ${mime}, ${formatBytes(base64Size(data))}, not shown${why ?? OVER_TOTAL}]`);
        }
        break;
      }
      case "resource": {
        const { header, text, image, blob } = resourceParts(isObject(part.resource) ? part.resource : {});
        if (text !== undefined) texts.push(`${header}\n${text}`);
        else if (blob) texts.push(`${header}: binary, ${formatBytes(base64Size(blob.data))}, not shown`);
        else if (image && imageBytes + image.data.length <= MODEL_IMAGES_MAX_BASE64) {
          texts.push(header);
          images.push(image);
          imageBytes += image.data.length;
        } else
          texts.push(
            image ? `${header}: image, ${formatBytes(base64Size(image.data))}, not shown${OVER_TOTAL}` : header,
          );
        break;
      }
      case "resource_link":
        texts.push(describeResourceLink(part, server));
        break;
      default:
        texts.push(`[unsupported content type ${JSON.stringify(part.type)}]`);
    }
  }
  // An empty text part says nothing: the structured content is the result.
  if (texts.every(isEmpty) && result.structuredContent !== undefined)
    texts.splice(0, texts.length, JSON.stringify(result.structuredContent, null, 2));
  // Servers on protocol 2024-10-07 answer with `toolResult` instead of `content`.
  if (texts.length === 0 && parts.length === 0 && result.toolResult !== undefined)
    texts.push(typeof result.toolResult === "string" ? result.toolResult : JSON.stringify(result.toolResult, null, 2));
  const text = texts.join("\n");
  const content: PiContent[] = [];
  if (text !== "" || images.length === 0) content.push({ type: "text", text: text === "" ? "(no output)" : text });
  content.push(...images);
  return { content, text, isError: result.isError === true };
}
