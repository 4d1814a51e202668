/**
 * Elicitation in form mode: the form's fields and the checks on typed answers (pure), the dialogs on their own with a
 * recording UI, and the reference server's `trigger-elicitation-request` through pi in-process — answered field by
 * field in the UI, and declined where there is no UI.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import type { ElicitRequestFormParams } from "@modelcontextprotocol/sdk/types.js";
import { DialogBudget } from "../src/pi/dialog-budget.ts";
import { answerElicitation, elicitationFeatures, sendToRequiredPages } from "../src/pi/elicitation-dialog.ts";
import { checkPicks, fieldHint, type FormField, formFields, parseTypedAnswer } from "../src/pi/elicitation-form.ts";
import {
  connectionFor,
  EVERYTHING_SERVER,
  EXTENSION_DIR,
  fixtureEntry,
  readLog,
  REPO_ROOT,
  restoreEnv,
  tempDir,
} from "./helpers.ts";
import { bundledFixture } from "./fixture-bundle.ts";
import { callOnceInPi } from "./pi-harness.ts";
import { RecordingUI } from "./recording-ui.ts";

const ASKING_SERVER = bundledFixture(path.join(REPO_ROOT, "test", "fixtures", "asking-server.mjs"));
const FORM: ElicitRequestFormParams = {
  message: "Tell us \x1b[2Jabout you",
  requestedSchema: {
    type: "object",
    properties: {
      name: { type: "string", title: "Name\x07", minLength: 2 },
      agree: { type: "boolean", title: "Agree", default: false },
      email: { type: "string", format: "email" },
      born: { type: "string", format: "date" },
      age: { type: "integer", minimum: 1, maximum: 130, default: 30 },
      hero: {
        type: "string",
        oneOf: [
          { const: "h1", title: "Superman" },
          { const: "h2", title: "Wonder Woman" },
        ],
        default: "h2",
      },
      pet: { type: "string", enum: ["p1", "p2"], enumNames: ["Cats", "Dogs"] },
      tools: {
        type: "array",
        minItems: 1,
        maxItems: 2,
        items: { type: "string", enum: ["saw", "drill", "glue"] },
        default: ["glue"],
      },
    },
    required: ["name", "email"],
  },
};

describe("an elicitation form's fields", () => {
  const { fields, unsupported } = formFields(FORM);
  const field = (key: string) => fields.find((f) => f.key === key)!;

  test("every spec shape becomes a field, in the server's order, with its label stripped of control sequences", () => {
    assert.deepEqual(unsupported, []);
    assert.deepEqual(
      fields.map((f) => `${f.key}:${f.kind}`),
      [
        "name:text",
        "agree:boolean",
        "email:text",
        "born:text",
        "age:number",
        "hero:choice",
        "pet:choice",
        "tools:multi",
      ],
    );
    assert.equal(field("name").label, "Name");
    assert.equal(field("email").label, "email", "the key when there is no title");
    assert.deepEqual((field("pet") as Extract<FormField, { kind: "choice" }>).choices, [
      { value: "p1", title: "Cats" },
      { value: "p2", title: "Dogs" },
    ]);
    assert.deepEqual(
      (field("hero") as Extract<FormField, { kind: "choice" }>).choices.map((c) => c.title),
      ["Superman", "Wonder Woman"],
    );
    assert.equal(fieldHint(field("age")), " (optional; a whole number; 1 to 130; default 30)");
    assert.equal(fieldHint(field("email")), " (email)");
  });

  test("a choice's default is named by the title the user picks it by, not by the value sent", () => {
    assert.equal(fieldHint(field("hero")), " (optional; default Wonder Woman)");
    const fish = formFields({
      requestedSchema: {
        type: "object",
        properties: {
          fish: {
            type: "array",
            items: { anyOf: [{ const: "fish-1", title: "Salmon" }] },
            default: ["fish-1"],
          },
        },
      },
    }).fields[0]!;
    assert.equal(fieldHint(fish), " (optional; default Salmon)");
  });

  test("a title or description of nothing but control sequences is no title: the key (or value) is shown instead", () => {
    const { fields } = formFields({
      requestedSchema: {
        type: "object",
        properties: {
          secret: { type: "string", title: "\x1b[2J\x07", description: "\x1b]0;x\x07" },
          pick: { type: "string", oneOf: [{ const: "a", title: "\x1b[31m" }] },
        },
      },
    });
    assert.deepEqual(
      fields.map((f) => [f.label, f.description]),
      [
        ["secret", undefined],
        ["pick", undefined],
      ],
    );
    assert.deepEqual((fields[1] as Extract<FormField, { kind: "choice" }>).choices, [{ value: "a", title: "a" }]);
  });

  test("a huge list of choices with one title (a hostile server) is told apart at once, not in quadratic time", () => {
    const n = 20_000;
    const started = Date.now();
    const { fields } = formFields({
      requestedSchema: {
        type: "object",
        properties: {
          p: { type: "string", enum: Array.from({ length: n }, (_, i) => `v${i}`), enumNames: Array(n).fill("Same") },
        },
      },
    });
    const elapsed = Date.now() - started;
    const { choices } = fields[0] as Extract<FormField, { kind: "choice" }>;
    assert.deepEqual(
      [choices[0]!.title, choices[1]!.title, choices.at(-1)!.title],
      ["Same", "Same (2)", `Same (${n})`],
    );
    assert.equal(new Set(choices.map((c) => c.title)).size, n);
    assert.ok(elapsed < 3000, `${elapsed} ms: pi's terminal is frozen while it runs`);
  });

  test("a shape outside the spec (an object, an array of numbers) is reported, not guessed at", () => {
    const odd = formFields({
      requestedSchema: {
        type: "object",
        properties: { where: { type: "object" } as never, ns: { type: "array", items: { type: "number" } } as never },
      },
    });
    assert.deepEqual(odd.unsupported, ["where", "ns"]);
  });

  test("a single choice with nothing to pick (an empty enum) is reported: the user is not asked a dead end", async () => {
    const ui = new RecordingUI();
    ui.answers = ["Fill in", "Send"];
    const form = {
      message: "pick",
      requestedSchema: {
        type: "object" as const,
        properties: {
          plan: { type: "string" as const, enum: [] },
        },
        required: ["plan"],
      },
    };
    assert.deepEqual(await answerElicitation("crm", form, ui.context()), { action: "decline" });
    assert.deepEqual(ui.notices, ["MCP server 'crm' asked for fields pi cannot show (plan); the request is declined."]);
  });

  test("a task's question, which the SDK does not check: an enum value that is no string leaves the others' titles theirs", () => {
    const { fields } = formFields({
      requestedSchema: {
        type: "object",
        properties: { pet: { type: "string", enum: [1, "p2"], enumNames: ["One", "Dogs"] } as never },
      },
    });
    assert.deepEqual((fields[0] as Extract<FormField, { kind: "choice" }>).choices, [{ value: "p2", title: "Dogs" }]);
  });

  test("a task's question, which the SDK does not check: a field that is not a schema at all is reported, not a crash", async () => {
    const ui = new RecordingUI();
    const form = { message: "m", requestedSchema: { type: "object", properties: { where: null, n: 3 } } } as never;
    assert.deepEqual(await answerElicitation("crm", form, ui.context()), { action: "decline" });
    assert.deepEqual(ui.notices, [
      "MCP server 'crm' asked for fields pi cannot show (where, n); the request is declined.",
    ]);
  });

  test("typed answers are checked: required, length, email, date, whole numbers and bounds; empty takes the default", () => {
    const text = (key: string) => field(key) as Extract<FormField, { kind: "text" | "number" }>;
    assert.deepEqual(parseTypedAnswer(text("name"), "  "), { error: "Name is required." });
    assert.match(parseTypedAnswer(text("name"), "A").error!, /at least 2 characters/);
    assert.deepEqual(parseTypedAnswer(text("name"), " Ada "), { value: "Ada" });
    assert.match(parseTypedAnswer(text("email"), "ada@").error!, /email address/);
    assert.deepEqual(parseTypedAnswer(text("email"), "ada@example.com"), { value: "ada@example.com" });
    assert.match(parseTypedAnswer(text("born"), "2023-02-30").error!, /YYYY-MM-DD/, "a date that does not exist");
    assert.deepEqual(parseTypedAnswer(text("born"), "1815-12-10"), { value: "1815-12-10" });
    assert.deepEqual(parseTypedAnswer(text("born"), ""), {}, "optional and no default: left out");
    assert.deepEqual(parseTypedAnswer(text("age"), ""), { value: 30 });
    assert.match(parseTypedAnswer(text("age"), "4.5").error!, /whole number/);
    assert.match(parseTypedAnswer(text("age"), "131").error!, /at most 130/);
    assert.match(parseTypedAnswer(text("age"), "abc").error!, /must be a number/);
    // JavaScript reads these as numbers (26, 3, 15); a person typing them did not mean a decimal number.
    for (const typed of ["0x1A", "0b11", "0o17"])
      assert.match(parseTypedAnswer(text("age"), typed).error ?? "", /must be a number/, typed);
    assert.deepEqual(parseTypedAnswer(text("age"), "1e2"), { value: 100 });
    // Past 2^53 a JavaScript number is not the one typed: the server would get 12345678901234567000.
    const id = { key: "id", label: "Account", required: true, kind: "number", integer: true } as const;
    assert.match(parseTypedAnswer(id, "12345678901234567891").error ?? "", /too large/);
    assert.deepEqual(parseTypedAnswer(id, "9007199254740991"), { value: 9007199254740991 });
    assert.deepEqual(parseTypedAnswer(text("age"), "42"), { value: 42 });
  });

  test("lengths count characters as JSON Schema does, not UTF-16 units: an emoji is one character", () => {
    const bounded = { key: "k", label: "Nick", required: true, kind: "text", minLength: 2, maxLength: 3 } as const;
    assert.deepEqual(parseTypedAnswer(bounded, "日本😀"), { value: "日本😀" });
    assert.match(parseTypedAnswer(bounded, "😀").error!, /at least 2 characters/);
    const initial = { key: "k", label: "Initial", required: true, kind: "text", maxLength: 1 } as const;
    assert.equal(parseTypedAnswer(initial, "AB").error, "Initial takes at most 1 character.");
  });

  test("a date-time is one a server's schema check takes (RFC 3339: seconds and a zone) on a day that exists", () => {
    const when = { key: "k", label: "When", required: true, kind: "text", format: "date-time" } as const;
    assert.deepEqual(parseTypedAnswer(when, "2024-05-01T10:00:00Z"), { value: "2024-05-01T10:00:00Z" });
    assert.deepEqual(parseTypedAnswer(when, "2024-05-01T10:00:00.5+02:00"), { value: "2024-05-01T10:00:00.5+02:00" });
    for (const refused of ["2024-02-30T10:00:00Z", "2024-05-01T10:00", "2024-05-01T10:00:00"])
      assert.match(
        parseTypedAnswer(when, refused).error ?? "",
        /When must be a date and time as YYYY-MM-DDTHH:MM:SSZ/,
        refused,
      );
  });

  test("a multi-select's picks are counted against its bounds", () => {
    const tools = field("tools") as Extract<FormField, { kind: "multi" }>;
    assert.match(checkPicks(tools, [])!, /at least 1/);
    assert.match(checkPicks(tools, ["saw", "drill", "glue"])!, /at most 2/);
    assert.equal(checkPicks(tools, ["saw"]), undefined);
  });
});

describe("the elicitation dialogs", () => {
  test("a whole form: the server is named, a bad answer is asked again, toggles and defaults, then sent", async () => {
    const ui = new RecordingUI();
    ui.answers = [
      "Fill in",
      "Ada",
      "Yes",
      "ada@",
      "ada@example.com",
      "",
      "",
      "Superman",
      "(skip)",
      "[ ] saw",
      "[x] glue",
      "[ ] drill",
      "Done",
      "Send",
    ];
    const result = await answerElicitation("crm", FORM, ui.context());
    assert.deepEqual(result, {
      action: "accept",
      content: { name: "Ada", agree: true, email: "ada@example.com", age: 30, hero: "h1", tools: ["saw", "drill"] },
    });
    assert.match(ui.asked[0]!, /^select: MCP server 'crm' asks for input:\nTell us about you$/);
    assert.ok(
      ui.asked.every((q) => q.includes("MCP server 'crm'")),
      "every question names the server",
    );
    assert.deepEqual(ui.offered[1], ["No", "Yes", "(skip)"], "the default first");
    assert.deepEqual(ui.notices, ["email must be an email address."]);
    assert.match(
      ui.asked.at(-1)!,
      /Send this to MCP server 'crm'\?\nName: Ada\nAgree: true\nemail: ada@example.com\nborn: \(not given\)/,
    );
    // Choices as the user picked them, by their titles, not the values the server gets.
    assert.match(ui.asked.at(-1)!, /\nhero: Superman\npet: \(not given\)\ntools: saw, drill$/);
  });

  test("an optional field named as a property every object has ('constructor'), skipped, is shown as not given", async () => {
    const ui = new RecordingUI();
    ui.answers = ["Fill in", "(skip)", "Decline"];
    const form = {
      message: "build?",
      requestedSchema: { type: "object" as const, properties: { constructor: { type: "boolean" as const } } },
    };
    assert.deepEqual(await answerElicitation("crm", form, ui.context()), { action: "decline" });
    assert.match(ui.asked.at(-1)!, /\nconstructor: \(not given\)$/);
  });

  test("a field named '__proto__' (the server names its fields) is sent under that name, and shown as given", async () => {
    const ui = new RecordingUI();
    ui.answers = ["Fill in", "ann", "Send"];
    const form = JSON.parse(
      '{"message":"who?","requestedSchema":{"type":"object","properties":{"__proto__":{"type":"string"}}}}',
    );
    const result = await answerElicitation("crm", form, ui.context());
    assert.equal(JSON.stringify(result), '{"action":"accept","content":{"__proto__":"ann"}}');
    assert.match(ui.asked.at(-1)!, /\n__proto__: ann$/);
  });

  test("an optional field with a default, skipped, shows and sends that default, which the SDK would send anyway", async () => {
    const ui = new RecordingUI();
    ui.answers = ["Fill in", "(skip)", "(skip)", "(skip)", "Send"];
    const form = {
      message: "clean up?",
      requestedSchema: {
        type: "object" as const,
        properties: {
          wipe: { type: "boolean" as const, title: "Delete everything", default: true },
          mode: { type: "string" as const, enum: ["fast", "safe"], default: "fast" },
          tags: { type: "array" as const, items: { type: "string" as const, enum: ["a", "b"] }, default: ["b"] },
        },
      },
    };
    assert.deepEqual(await answerElicitation("crm", form, ui.context()), {
      action: "accept",
      content: { wipe: true, mode: "fast", tags: ["b"] },
    });
    assert.match(ui.asked.at(-1)!, /\nDelete everything: true\nmode: fast\ntags: b$/);
  });

  test("an optional typed field with a default: a bad answer says an empty one takes the default, as it does", async () => {
    const ui = new RecordingUI();
    ui.answers = ["Fill in", "x1", "", "Send", "Fill in", "x1", "x2", "x3", "Send"];
    const form = {
      message: "who?",
      requestedSchema: {
        type: "object" as const,
        properties: { email: { type: "string" as const, format: "email" as const, default: "ops@example.com" } },
      },
    };
    const sent = { action: "accept", content: { email: "ops@example.com" } };
    assert.deepEqual(await answerElicitation("crm", form, ui.context()), sent);
    assert.deepEqual(await answerElicitation("crm", form, ui.context()), sent, "three bad answers: the default");
    assert.match(ui.asked.at(-1)!, /\nemail: ops@example.com$/);
    assert.deepEqual(ui.notices, [
      ...Array(4).fill("email must be an email address. Leave it empty for its default."),
      "email takes its default.",
    ]);
  });

  test("choices with the same title, or titled '(skip)', are told apart: the one picked is the one sent", async () => {
    const ui = new RecordingUI();
    const same = [
      { const: "a", title: "Same" },
      { const: "b", title: "Same" },
      { const: "c", title: "(skip)" },
    ];
    const form = {
      message: "pick",
      requestedSchema: {
        type: "object" as const,
        properties: {
          one: { type: "string" as const, oneOf: same },
          two: { type: "string" as const, oneOf: same },
          many: { type: "array" as const, items: { anyOf: same } },
        },
      },
    };
    ui.answers = ["Fill in", 1, 2, 2, 0, "Send"];
    assert.deepEqual(await answerElicitation("crm", form, ui.context()), {
      action: "accept",
      content: { one: "b", two: "c", many: ["b"] },
    });
    assert.equal(new Set(ui.offered[1]).size, 4, "four options a user can tell apart");
  });

  test("a server's defaults are shown without their terminal escapes, and sent as the server gave them", async () => {
    const ui = new RecordingUI();
    const placeholders: Array<string | undefined> = [];
    const context = ui.context();
    const input: typeof context.input = (title, placeholder) => {
      placeholders.push(placeholder);
      return context.input(title, placeholder);
    };
    ui.answers = ["Fill in", "", "Done", "Send"];
    const form = {
      message: "where?",
      requestedSchema: {
        type: "object" as const,
        properties: {
          dir: { type: "string" as const, default: "/tmp\x1b]0;pwned\x07" },
          tags: {
            type: "array" as const,
            items: { type: "string" as const, enum: ["a\x1b[2J"] },
            default: ["a\x1b[2J"],
          },
        },
      },
    };
    assert.deepEqual(await answerElicitation("crm", form, { ...context, input }), {
      action: "accept",
      content: { dir: "/tmp\x1b]0;pwned\x07", tags: ["a\x1b[2J"] },
    });
    assert.deepEqual(ui.asked.slice(1, 3), [
      "input: MCP server 'crm': dir (optional; default /tmp)",
      "select: MCP server 'crm': tags (optional; default a)",
    ]);
    assert.deepEqual(placeholders, ["/tmp"]);
  });

  test("a multi-select changed past its bound cancels the form, and says so: the form does not just vanish", async () => {
    const ui = new RecordingUI();
    ui.answers = ["Fill in", "[ ] a", "[x] a", "[ ] a", "[x] a", "[ ] a"];
    const form = {
      message: "which?",
      requestedSchema: {
        type: "object" as const,
        properties: {
          sides: { type: "array" as const, title: "Sides", items: { type: "string" as const, enum: ["a"] } },
        },
      },
    };
    assert.deepEqual(await answerElicitation("crm", form, ui.context()), { action: "cancel" });
    assert.deepEqual(ui.answers, []);
    assert.deepEqual(ui.notices, ["Sides: too many tries; the form is cancelled."]);
  });

  test("Decline and Cancel at the start or the end, Escape anywhere; a form nobody can answer is declined", async () => {
    const ui = new RecordingUI();
    ui.answers = ["Decline"];
    assert.deepEqual(await answerElicitation("crm", FORM, ui.context()), { action: "decline" });
    ui.answers = ["Fill in", "Ada", undefined];
    assert.deepEqual(
      await answerElicitation("crm", FORM, ui.context()),
      { action: "cancel" },
      "Escape on the second field",
    );
    assert.deepEqual(await answerElicitation("crm", FORM, undefined), { action: "decline" }, "no UI");
    ui.answers = ["Fill in", "x", "xy", "z", "ww"];
    assert.deepEqual(
      await answerElicitation(
        "crm",
        {
          message: "name?",
          requestedSchema: {
            type: "object",
            properties: { name: { type: "string", minLength: 3 } },
            required: ["name"],
          },
        },
        ui.context(),
      ),
      { action: "cancel" },
      "three answers it cannot take end the form",
    );
    assert.deepEqual(ui.answers, ["ww"], "and it stops asking");
    // An optional field three answers missed is left out, and the form goes on (server-everything's email field).
    ui.answers = ["Fill in", "x1", "x2", "x3", "Ada", "Send"];
    ui.notices.length = 0;
    const optional = {
      message: "who?",
      requestedSchema: {
        type: "object" as const,
        properties: { email: { type: "string" as const, format: "email" as const }, name: { type: "string" as const } },
        required: ["name"],
      },
    };
    assert.deepEqual(await answerElicitation("crm", optional, ui.context()), {
      action: "accept",
      content: { name: "Ada" },
    });
    assert.deepEqual(ui.notices, [
      "email must be an email address. Leave it empty to skip it.",
      "email must be an email address. Leave it empty to skip it.",
      "email must be an email address. Leave it empty to skip it.",
      "email is left out.",
    ]);
  });
});

describe("URL mode: a page to open", () => {
  const page = {
    mode: "url" as const,
    elicitationId: "e1",
    url: "https://auth.example.com/flow?x=1",
    message: "Link your \x1b]52;c;Zm9v\x07account",
  };

  test("the server, its message and the page are shown; the browser opens only on the user's word", async () => {
    const ui = new RecordingUI();
    const opened: string[] = [];
    ui.answers = ["Open in browser"];
    assert.deepEqual(await answerElicitation("crm", page, ui.context(), (url) => opened.push(url)), {
      action: "accept",
    });
    assert.equal(
      ui.asked[0],
      "select: MCP server 'crm' asks you to open a page:\nLink your account\nhttps://auth.example.com/flow?x=1",
    );
    assert.deepEqual(opened, [page.url]);
    ui.answers = ["Decline"];
    assert.deepEqual(await answerElicitation("crm", page, ui.context(), (url) => opened.push(url)), {
      action: "decline",
    });
    ui.answers = [undefined];
    assert.deepEqual(await answerElicitation("crm", page, ui.context(), (url) => opened.push(url)), {
      action: "cancel",
    });
    assert.equal(opened.length, 1, "declined and cancelled pages stay closed");
  });

  test("a javascript:, file: or remote plain-http page is declined without asking or opening", async () => {
    const ui = new RecordingUI();
    const opened: string[] = [];
    for (const url of ["javascript:alert(1)", "file:///etc/passwd", "http://evil.example.com/x", "not a url"]) {
      assert.deepEqual(
        await answerElicitation("crm", { ...page, url }, ui.context(), (u) => opened.push(u)),
        { action: "decline" },
        url,
      );
    }
    assert.deepEqual(ui.asked, []);
    assert.equal(opened.length, 0);
    assert.equal(ui.notices.length, 4);
    assert.match(ui.notices[0]!, /the `javascript:` scheme \(only https is opened\); declined/);
    ui.answers = ["Open in browser"];
    assert.deepEqual(
      await answerElicitation("crm", { ...page, url: "http://127.0.0.1:8080/cb" }, ui.context(), (u) => opened.push(u)),
      { action: "accept" },
      "loopback http is fine",
    );
  });

  test("a page whose host is spelt in look-alike letters (a Cyrillic 'а') is shown by the name the browser goes to", async () => {
    const ui = new RecordingUI();
    const opened: string[] = [];
    ui.answers = ["Open in browser"];
    const url = "https://\u0430ccounts.google.com/login";
    const answer = await answerElicitation("crm", { ...page, url }, ui.context(), (u) => opened.push(u));
    assert.deepEqual(answer, { action: "accept" });
    assert.equal(
      ui.asked[0],
      "select: MCP server 'crm' asks you to open a page:\nLink your account\nhttps://xn--ccounts-1fg.google.com/login",
    );
    assert.match(ui.notices[0]!, /\nhttps:\/\/xn--ccounts-1fg\.google\.com\/login$/);
    assert.deepEqual(opened, [url]);
  });

  test("a page whose address hides its host behind a user name ('https://accounts.google.com@evil.example') is declined", async () => {
    const ui = new RecordingUI();
    const opened: string[] = [];
    const url = `https://accounts.google.com${"-signin".repeat(700)}@evil.example/login`;
    for (const address of ["https://accounts.google.com@evil.example/login", url, "https://a:b@evil.example/"]) {
      const answer = await answerElicitation("crm", { ...page, url: address }, ui.context(), (u) => opened.push(u));
      assert.deepEqual(answer, { action: "decline" }, address);
    }
    assert.deepEqual([ui.asked, opened], [[], []]);
    assert.match(ui.notices[0]!, /its address names a user before its host \(evil\.example\); declined/);
  });

  test("a page is said to be done only once, and only if the user went to it; other such notices are ignored", async () => {
    const saved = { ...process.env };
    process.env.PI_MCP_NO_BROWSER = "1";
    try {
      const ui = new RecordingUI();
      const features = elicitationFeatures("crm", () => ({ ui: ui.context() }), new DialogBudget(() => undefined));
      features.elicitationComplete!("never-asked");
      ui.answers = ["Open in browser", "Decline"];
      await features.elicitation!(page);
      await features.elicitation!({ ...page, elicitationId: "e2" });
      for (const id of ["e1", "e1", "e2"]) features.elicitationComplete!(id);
      assert.deepEqual(
        ui.notices.filter((n) => n.includes("done")),
        ["MCP server 'crm' says the page you were sent to is done."],
      );
    } finally {
      restoreEnv(saved);
    }
  });

  test("a page a call needs first offers to decline the rest from the server, as a form or a page asked for does", async () => {
    const ui = new RecordingUI();
    ui.answers = ["Decline the rest"];
    const features = elicitationFeatures("crm", () => ({ ui: ui.context() }), new DialogBudget(() => undefined));
    assert.equal(await features.urlElicitationRequired!([page, page]), false);
    assert.deepEqual(ui.offered, [
      ["Open in browser", "Decline", "Cancel", "Decline the rest from this server for this session"],
    ]);
    assert.deepEqual(await features.elicitation!(page), { action: "decline" }, "declined without asking");
    assert.equal(ui.asked.length, 1);
  });

  test("pages a call needs first: each opened, then the call is retried only if the user says so", async () => {
    const ui = new RecordingUI();
    const opened: string[] = [];
    const open = (url: string) => opened.push(url);
    ui.answers = ["Open in browser", "Open in browser", "Retry"];
    assert.equal(
      await sendToRequiredPages("crm", [page, { ...page, url: "https://two.example.com/" }], ui.context(), open),
      true,
    );
    assert.deepEqual(opened, [page.url, "https://two.example.com/"]);
    ui.answers = ["Open in browser", "Cancel"];
    assert.equal(await sendToRequiredPages("crm", [page], ui.context(), open), false);
    ui.answers = ["Decline"];
    assert.equal(
      await sendToRequiredPages("crm", [page, page], ui.context(), open),
      false,
      "one declined: no retry, and not asked further",
    );
    assert.deepEqual(ui.answers, []);
    assert.equal(await sendToRequiredPages("crm", [page], undefined, open), false, "no UI");
  });
});

describe("server-everything's elicitation through pi", { timeout: 120_000 }, () => {
  const project = tempDir("mcp-bridge-elicit-project-");
  const agentDir = tempDir("mcp-bridge-elicit-agent-");
  const originalCwd = process.cwd();
  const form = "mcp_everything_trigger-elicitation-request";
  const page = "mcp_everything_trigger-url-elicitation";
  const url = "https://example.com/consent";

  before(() => {
    // User-level, so no project trust; its tools run without approval prompts, and the model calls them directly.
    const entry = {
      command: process.execPath,
      args: [EVERYTHING_SERVER, "stdio"],
      autoApprove: ["*"],
      exposure: "direct",
    };
    writeFileSync(path.join(agentDir.dir, "mcp.json"), JSON.stringify({ mcpServers: { everything: entry } }));
    process.env.PI_CODING_AGENT_DIR = agentDir.dir;
    process.env.PI_MCP_STARTUP_BUDGET_MS = "60000";
    // The pages of the URL tests are shown, never opened in a browser.
    process.env.PI_MCP_NO_BROWSER = "1";
    process.chdir(project.dir);
  });
  after(() => {
    process.chdir(originalCwd);
    project.cleanup();
    agentDir.cleanup();
  });

  async function call(ui: RecordingUI | undefined, tool: string, args: Record<string, unknown> = {}) {
    const result = await callOnceInPi({
      cwd: project.dir,
      agentDir: agentDir.dir,
      extensionPaths: [EXTENSION_DIR],
      uiContext: ui?.context(),
      tool,
      args,
    });
    assert.ok(result.offered, "offered: the bridge declares elicitation (form and URL)");
    return result;
  }

  test("a form answered in the UI: the server gets what the user entered, its defaults for the rest", async () => {
    const ui = new RecordingUI();
    ui.answers = [
      "Fill in",
      "Ada Lovelace", // name
      "Yes", // check
      "", // firstLine: its default
      "ada@example.com",
      "", // homepage: left out
      "1815-12-10",
      "500", // integer: over its maximum, asked again
      "7",
      "2.5",
      "Joey",
      "[ ] Piano", // added to the default Guitar
      "Done",
      "Wonder Woman",
      "Done", // the default fish
      "Dogs",
      "Send",
    ];
    const { text } = await call(ui, form);
    assert.deepEqual(ui.answers, [], "every field was asked");
    assert.match(text, /User provided the requested information/);
    for (const line of [
      "- Name: Ada Lovelace",
      "- Agreed to terms: true",
      "- Email: ada@example.com",
      "- Birthdate: 1815-12-10",
      "- Favorite Integer: 7",
      "- Favorite Number: 2.5",
    ]) {
      assert.ok(text.includes(line), `${line} in:\n${text}`);
    }
    const raw = JSON.parse(text.slice(text.indexOf("{"))) as { content: Record<string, unknown> };
    assert.deepEqual(raw.content.untitledMultipleSelectEnum, ["Guitar", "Piano"]);
    assert.equal(raw.content.titledSingleSelectEnum, "hero-3");
    assert.deepEqual(raw.content.titledMultipleSelectEnum, ["fish-1"]);
    assert.equal(raw.content.legacyTitledEnum, "pet-2");
    assert.equal(raw.content.homepage, undefined, "nothing the user left out is made up");
    assert.deepEqual(
      ui.notices.filter((n) => n.includes("must")),
      ["Integer must be at most 100. Leave it empty for its default."],
    );
  });

  test("a form without a UI is declined, and the model is told so by the server's result", async () => {
    const { text } = await call(undefined, form);
    assert.match(text, /User declined to provide the requested information/);
  });

  test("a page by the request path: shown and accepted, and the server hears so", async () => {
    const ui = new RecordingUI();
    ui.answers = ["Open in browser"];
    const { text } = await call(ui, page, { url, message: "Approve the demo" });
    assert.match(
      ui.asked[0]!,
      /^select: MCP server 'everything' asks you to open a page:\nApprove the demo\nhttps:\/\/example\.com\/consent$/,
    );
    assert.match(text, /User completed the URL elicitation flow/);
  });

  test("a page by the error path (-32042): the prerequisite page, then the call retried, which asks for its own page", async () => {
    const ui = new RecordingUI();
    ui.answers = ["Open in browser", "Retry", "Open in browser"];
    const { text, isError } = await call(ui, page, { url, message: "Approve the demo", errorPath: true });
    assert.deepEqual(ui.answers, []);
    assert.match(
      ui.asked[0]!,
      /asks you to open a page:\nOpen this link to satisfy the prerequisite, then retry the request\.\nhttps:\/\/modelcontextprotocol\.io/,
    );
    assert.match(ui.asked[1]!, /needs that done before the call can run/);
    assert.equal(isError, false);
    assert.match(text, /User completed the URL elicitation flow/);
  });

  test("the error path without a UI: the call fails with the server's reason, and nothing is retried", async () => {
    const { text, isError } = await call(undefined, page, { url, errorPath: true });
    assert.equal(isError, true);
    assert.match(text, /requires browser-based authorization/);
  });
});

describe("a call whose server asks for a page every time", { timeout: 60_000 }, () => {
  test("the user's yes retries it once; the server's second ask is the call's error", async () => {
    const tmp = tempDir("mcp-bridge-pages-");
    const log = path.join(tmp.dir, "calls.jsonl");
    let asked = 0;
    const connection = connectionFor(
      "pages",
      { ...fixtureEntry(), env: { FIXTURE_LOG: log } },
      // The user would say yes a few times over: the bridge asks only once.
      { features: { urlElicitationRequired: async () => ++asked <= 3 } },
    );
    try {
      await connection.connect();
      await assert.rejects(connection.callTool("needs_page", {}), /Open the consent page first/);
      assert.equal(asked, 1, "the user is asked once");
      const calls = readLog(log).filter((e) => e.event === "call" && e.name === "needs_page");
      assert.equal(calls.length, 2, "the call and its one retry");
    } finally {
      await connection.close();
      tmp.cleanup();
    }
  });
});

describe("an elicitation that quotes the server's secret", { timeout: 60_000 }, () => {
  test("reaches the user's screen with it hidden (message, titles, descriptions), as a sampling request does", async () => {
    const secret = "sk-elicit-secret-0123456789";
    const asked: string[] = [];
    const connection = connectionFor(
      "quoting",
      // Its tool `quote_secret` asks the user for input with a form that quotes the API key it was given.
      { command: process.execPath, args: [ASKING_SERVER], env: { API_KEY: secret }, protocolVersion: "2025-06-18" },
      {
        features: {
          // What the user reads is checked; the one choice is picked, and goes back as the server gave it.
          elicitation: async (request) => {
            const { message, requestedSchema } = request as ElicitRequestFormParams;
            const { name, pick } = requestedSchema.properties as Record<string, { enum?: string[] }>;
            asked.push(JSON.stringify({ message, name }));
            return { action: "accept", content: { pick: pick!.enum![0]! } };
          },
        },
      },
    );
    try {
      await connection.connect();
      const { content } = await connection.callTool("quote_secret", { kind: "form" });
      assert.deepEqual(content, [{ type: "text", text: "accept kept" }]);
      assert.equal(asked.length, 1);
      assert.ok(!asked[0]!.includes(secret), asked[0]);
      assert.match(asked[0]!, /the key is \*\*\*/);
    } finally {
      await connection.close();
    }
  });
});

describe("a choice whose default is none of its choices", { timeout: 60_000 }, () => {
  test("skipped: the last dialog shows what the server gets (the SDK sends the schema's default for a field left out)", async () => {
    const ui = new RecordingUI();
    ui.answers = ["Fill in", "(skip)", "Send"];
    const connection = connectionFor(
      "defaults",
      { command: process.execPath, args: [ASKING_SERVER], protocolVersion: "2025-06-18" },
      { features: { elicitation: (request) => answerElicitation("defaults", request, ui.context()) } },
    );
    try {
      await connection.connect();
      // The tool asks for the form, then answers with the content it got.
      const mode = { type: "string", enum: ["fast", "safe"], default: "turbo" };
      const schema = { type: "object", properties: { mode } };
      const { content } = await connection.callTool("ask_form", { message: "how?", schema });
      assert.deepEqual(content, [{ type: "text", text: '{"mode":"turbo"}' }]);
      assert.match(ui.asked.at(-1)!, /\nmode: turbo$/);
    } finally {
      await connection.close();
    }
  });
});

describe("a page a call needs first, whose message quotes the server's secret", { timeout: 60_000 }, () => {
  test("is offered with the secret hidden, as a form is", async () => {
    const secret = "sk-page-secret-0123456789";
    const offered: string[] = [];
    const connection = connectionFor(
      "pages",
      { ...fixtureEntry(), env: { FIXTURE_SECRET: secret } },
      { features: { urlElicitationRequired: async (pages) => (offered.push(JSON.stringify(pages)), false) } },
    );
    try {
      await connection.connect();
      await assert.rejects(connection.callTool("needs_page", {}), /Open the consent page first/);
      assert.equal(offered.length, 1);
      assert.ok(!offered[0]!.includes(secret), offered[0]);
      assert.match(offered[0]!, /Consent with \*\*\*/);
    } finally {
      await connection.close();
    }
  });
});

/**
 * The asking server given `env` (its secrets), its forms filled in by `ui`; `answers` holds what went back to it (the
 * tool's result, which echoes it, has the secrets hidden as any result has).
 */
function secretiveServer(env: Record<string, string>, ui: RecordingUI) {
  const features = elicitationFeatures("secretive", () => ({ ui: ui.context() }), new DialogBudget(() => undefined));
  const answers: unknown[] = [];
  const elicitation: typeof features.elicitation = async (...args) => {
    const answer = await features.elicitation!(...args);
    return (answers.push(answer), answer);
  };
  const connection = connectionFor(
    "secretive",
    { command: process.execPath, args: [ASKING_SERVER], env, protocolVersion: "2025-06-18" },
    { features: { ...features, elicitation } },
  );
  return { connection, answers };
}

describe("a form whose choices and defaults are the server's secret", { timeout: 60_000 }, () => {
  test("shows them hidden, and sends them back as the server gave them", async () => {
    const secret = "sk-choice-secret-0123456789";
    const ui = new RecordingUI();
    // The choice (its only one, untitled), then Enter in the text field for its default, then the multi-select's Done.
    ui.answers = ["Fill in", 0, "", "Done", "Send"];
    const { connection, answers } = secretiveServer({ API_KEY: secret }, ui);
    try {
      await connection.connect();
      const pick = { type: "string", enum: [secret] };
      const token = { type: "string", default: secret };
      const keys = { type: "array", items: { type: "string", enum: [secret, "other"] }, default: [secret] };
      const schema = { type: "object", properties: { pick, token, keys }, required: ["pick", "token"] };
      await connection.callTool("ask_form", { message: "which?", schema });
      assert.deepEqual(answers, [{ action: "accept", content: { pick: secret, token: secret, keys: [secret] } }]);
      const screen = JSON.stringify([ui.asked, ui.offered, ui.placeholders, ui.notices]);
      assert.ok(!screen.includes(secret), screen);
    } finally {
      await connection.close();
    }
  });
});

describe("a form whose choices are two of the server's secrets", { timeout: 60_000 }, () => {
  test("shows them apart, and sends the one picked", async () => {
    const [one, two] = ["sk-first-secret-0123456789", "sk-second-secret-0123456789"];
    const ui = new RecordingUI();
    ui.answers = ["Fill in", 1, "Send"];
    const { connection, answers } = secretiveServer({ API_KEY: one, OTHER_KEY: two }, ui);
    try {
      await connection.connect();
      const schema = { type: "object", properties: { key: { type: "string", enum: [one, two] } }, required: ["key"] };
      await connection.callTool("ask_form", { message: "which?", schema });
      assert.deepEqual(answers, [{ action: "accept", content: { key: two } }]);
      const choices = ui.offered[1]!;
      assert.equal(new Set(choices).size, 2, JSON.stringify(choices));
      assert.ok(!JSON.stringify(ui.offered).includes("secret-0123"), JSON.stringify(ui.offered));
    } finally {
      await connection.close();
    }
  });
});
