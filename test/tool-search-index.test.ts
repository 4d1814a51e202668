/**
 * The tool search over the tools of real public MCP servers (test/fixtures/public-tools, 16 servers): how a tool is
 * read into the index, synonyms, a few requests a model makes, and recall@3 on the whole relevance set
 * (bench/fixtures/tool-search-relevance.json), which the bench reports as `search.recall_at_3`.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Tool } from "@modelcontextprotocol/client";
import { answerToolName, laterQueries, recallAt, relevanceQueries } from "../bench/tool-search-recall.ts";
import { toolNameFor } from "../src/translate/naming.ts";
import { canonicalWords, GROUP_MARK } from "../src/exposure/search-synonyms.ts";
import { searchableTool, ToolSearchIndex } from "../src/exposure/tool-search-index.ts";
import { CJK_TOOLS_DIR, publicServers, publicToolsIndex } from "./fixtures/public-tools.ts";
import { termsOf } from "../src/exposure/search-terms.ts";
import { nameVerbs, requestAction, requestConcepts, toolAction } from "../src/exposure/search-query.ts";
import { namesInQuery, resolveNames } from "../src/exposure/tool-names.ts";

const index = publicToolsIndex();

function top(query: string, k = 3): string[] {
  return index.find(query, k).map((hit) => hit.name);
}

describe("public tool fixtures", () => {
  test("hold at least 240 tools of real servers, each with its package, version and capture date", () => {
    const servers = publicServers();
    assert.ok(servers.length >= 10, `${servers.length} servers`);
    let tools = 0;
    for (const server of servers) {
      assert.match(server.package, /^(@[\w.-]+\/)?[\w.-]+$/, server.server);
      assert.match(server.version, /^\d+\.\d+\.\d+/, server.server);
      assert.match(server.captured, /^\d{4}-\d{2}-\d{2}$/, server.server);
      assert.ok(server.tools.length > 0, server.server);
      assert.equal(
        new Set(server.tools.map((tool) => tool.name)).size,
        server.tools.length,
        `${server.server}: tool names repeat`,
      );
      tools += server.tools.length;
    }
    assert.ok(tools >= 240, `${tools} tools`);
    assert.equal(index.size, tools, "every tool has its own pi name in the index");
  });

  test("the relevance set has at least 60 requests, each answered by tools the fixtures have", () => {
    const queries = relevanceQueries();
    assert.ok(queries.length >= 60, `${queries.length} queries`);
    for (const { query, answers } of [...queries, ...laterQueries()]) {
      assert.ok(answers.length > 0, query);
      for (const answer of answers) assert.ok(index.has(answerToolName(answer)), `${query}: no tool ${answer}`);
    }
  });
});

describe("searchableTool", () => {
  test("reads the description as pi sends it, trimmed: one that starts with a blank line still has a first sentence", () => {
    const tool: Tool = {
      name: "read_file",
      description: "\n      Read a file's contents.\n      Paths are absolute.\n    ",
      inputSchema: { type: "object" },
    };
    assert.equal(
      searchableTool(tool, "files", "mcp_files_read_file").description,
      "Read a file's contents.\n      Paths are absolute.",
    );
  });

  test("reads names, title, description, and each parameter's name, description and values", () => {
    const tool: Tool = {
      name: "update_issue",
      description: "Update an existing issue",
      annotations: { title: "Update issue" },
      inputSchema: {
        type: "object",
        properties: {
          issue_number: { type: "number", description: "The issue's number" },
          state: { type: "string", enum: ["open", "closed"] },
          labels: { type: "array", items: { type: "string" } },
        },
      },
    };
    assert.deepEqual(searchableTool(tool, "github", "mcp_github_update_issue", "Code hosting"), {
      name: "mcp_github_update_issue",
      server: "github",
      originalName: "update_issue",
      title: "Update issue",
      description: "Update an existing issue",
      parameters: ["issue_number", "The issue's number", "state", "open", "closed", "labels"],
      serverDescription: "Code hosting",
    });
  });

  test("a tool without a description or parameters still makes a document", () => {
    const doc = searchableTool({ name: "ping", inputSchema: { type: "object" } }, "kubernetes", "mcp_kubernetes_ping");
    assert.deepEqual(doc, {
      name: "mcp_kubernetes_ping",
      server: "kubernetes",
      originalName: "ping",
      description: "",
      parameters: [],
    });
  });
});

describe("words", () => {
  test("a name in camelCase gives its parts too; an acronym's plural (PRs, VMs) is one word", () => {
    assert.deepEqual(termsOf("getHTTPStatus"), ["gethttpstatu", "~get", "~url", "statu"]);
    assert.deepEqual(termsOf("PRs VMs"), ["~pull request", "~instance"]);
    assert.deepEqual(termsOf("listPRs"), ["listpr", "~list", "~pull request"]);
  });
});

describe("synonyms", () => {
  test("a word or phrase of a group becomes the group's token, the longest phrase first", () => {
    assert.deepEqual(canonicalWords(["open", "a", "pr"]), ["open", "a", `${GROUP_MARK}pull request`]);
    assert.deepEqual(canonicalWords(["create", "pull", "request"]), [
      `${GROUP_MARK}create`,
      `${GROUP_MARK}pull request`,
    ]);
    assert.deepEqual(canonicalWords(["folders", "and", "directories"]), [
      `${GROUP_MARK}directory`,
      "and",
      `${GROUP_MARK}directory`,
    ]);
    assert.deepEqual(canonicalWords(["widget"]), ["widget"]);
    // A VM is what cloud APIs call an instance; a DM is a message.
    assert.deepEqual(termsOf("virtual machines VM instance"), ["~instance", "~instance", "~instance"]);
    assert.deepEqual(termsOf("dm direct message"), ["~message", "~message"]);
    // A server's or a build's log is not a browser's console: the two are near words, not one.
    assert.deepEqual(canonicalWords(["console", "logs"]), ["console", `${GROUP_MARK}log`]);
  });

  test("a request in other words than the tool's finds it", () => {
    // "folder" for "directory"
    assert.ok(
      top("make a new folder").some((name) => name.endsWith("_create_directory")),
      top("make a new folder").join(),
    );
    // "PR" for "pull request"
    assert.ok(top("open a PR from my feature branch into main").includes("mcp_github_create_pull_request"));
  });
});

describe("requests a model makes", () => {
  const cases: [string, string[]][] = [
    [
      "take a screenshot of the page",
      ["playwright/browser_take_screenshot", "chrome-devtools/take_screenshot", "puppeteer/puppeteer_screenshot"],
    ],
    ["show the logs of the crashing pod", ["kubernetes/kubectl_logs"]],
    ["close issue 17 on github", ["github/update_issue"]],
    // only a parameter's allowed values ("APPROVE") say that a review approves
    ["approve the pull request", ["github/create_pull_request_review"]],
    ["send a message to the #general channel", ["slack/slack_post_message"]],
  ];
  for (const [query, answers] of cases) {
    test(query, () => {
      const got = top(query);
      assert.ok(
        answers.some((answer) => got.includes(answerToolName(answer))),
        `got ${got.join(", ")}`,
      );
    });
  }

  test("the server's name narrows a request to its tools", () => {
    const got = top("list the databases on the mongo server", 1);
    assert.deepEqual(got, [toolNameFor("mongodb", "list-databases")]);
  });

  test("a tool for many things at once ranks below the one for one thing, and above it when the request asks for many", () => {
    // The rule itself, apart from what is learnt from requests (which may prefer either). Without the rule the bulk tool
    // ranks first for one ticket, and the other one for many.
    const tracker = new ToolSearchIndex({ related: new Map(), pairs: new Map() });
    const tools: Tool[] = [
      {
        name: "bulk_transition_issue_statuses",
        description: "Transition multiple issues in bulk.",
        inputSchema: { type: "object" },
      },
      {
        name: "transition_issue",
        description: "Transitions an issue.",
        inputSchema: { type: "object" },
      },
    ];
    for (const tool of tools) tracker.add(searchableTool(tool, "jira", toolNameFor("jira", tool.name)));
    const first = (query: string) => tracker.find(query, 2)[0]?.name;
    assert.equal(first("move PAY-1123 to In Review"), "mcp_jira_transition_issue");
    assert.equal(first("move all these issues to In Review"), "mcp_jira_bulk_transition_issue_statuses");
  });

  test("a plural noun in a tool's name is what it acts on, not what it does: pinning finds `pins_add`, not `pins_list`", () => {
    assert.deepEqual(nameVerbs("slack_pins_list"), termsOf("slack list"));
    assert.deepEqual(nameVerbs("listWorkflowRuns"), termsOf("listWorkflow"));
    assert.deepEqual(nameVerbs("get_workflow_run"), termsOf("get workflow run"));
    assert.deepEqual(nameVerbs("process_status"), termsOf("process status"));
    const chat = new ToolSearchIndex();
    const tools: Tool[] = [
      { name: "pins_list", description: "Lists items pinned to a channel.", inputSchema: { type: "object" } },
      { name: "pins_add", description: "Pins an item to a channel.", inputSchema: { type: "object" } },
    ];
    for (const tool of tools) chat.add(searchableTool(tool, "slack", toolNameFor("slack", tool.name)));
    assert.equal(chat.find("pin the rollback runbook message in #inc-42", 2)[0]?.name, "mcp_slack_pins_add");
    assert.equal(chat.find("which messages are pinned in #inc-42?", 2)[0]?.name, "mcp_slack_pins_list");
  });

  test("a tool added later is found, and a removed one no longer", () => {
    const small = new ToolSearchIndex();
    const tool: Tool = {
      name: "render_chart",
      description: "Draw a bar chart from numbers",
      inputSchema: { type: "object" },
    };
    small.add(searchableTool(tool, "charts", toolNameFor("charts", tool.name)));
    assert.deepEqual(
      small.find("plot a bar chart", 3).map((hit) => hit.name),
      ["mcp_charts_render_chart"],
    );
    small.remove("mcp_charts_render_chart");
    assert.deepEqual(small.find("plot a bar chart", 3), []);
  });

  test("a request carrying a long blob (a file in base64) is searched, not a crash", () => {
    const small = new ToolSearchIndex();
    const tool: Tool = { name: "decode_base64", description: "Decode base64 text", inputSchema: { type: "object" } };
    small.add(searchableTool(tool, "codec", toolNameFor("codec", tool.name)));
    const blob = Buffer.alloc(60_000, 7).toString("base64");
    assert.equal(small.find(`decode this ${blob}`, 3)[0]?.name, "mcp_codec_decode_base64");
  });

  test("a pasted log (120 KB) as a request, or thousands of names, are read as far as a request goes", () => {
    const all = index.all();
    // Read whole, each took seconds of pi's main thread: a name past the first 2,000 characters is not read.
    const log = "create an issue about the flaky build ".repeat(3_200);
    const name = all[0]!.name;
    assert.deepEqual(namesInQuery(`${name} ${log}`, all).names, [name]);
    assert.deepEqual(namesInQuery(`${log} ${name}`, all).names, []);
    assert.deepEqual(index.find(`${log} ${name}`, 5), index.find(log.slice(0, 2_000), 5));
    // Of thousands of names (one string or many), the first 100 are read.
    const names = Array.from({ length: 3_000 }, (_, i) => `tool_${i}`);
    for (const given of [names, [names.join(", ")]]) assert.equal(resolveNames(given, all).unknown.length, 100);
  });
});

describe("what a request's words count for", () => {
  const concepts = (query: string) => requestConcepts(query).map((concept) => concept.own.join(" "));

  test("function words are no concepts", () => {
    assert.deepEqual(concepts("log 2h against PROJ-1432 for today's debugging session").includes("against"), false);
    assert.deepEqual(concepts("kill whatever is hogging port 3000").includes("whatev"), false);
  });

  test("a name of words joined by '-' lends none of them, wherever it stands, even words a value has ('docs'); a file or @group keeps its meaning", () => {
    const closing = concepts("close issue #77 in docs-site as won't fix");
    assert.ok(!closing.some((own) => /doc|~page/.test(own)), closing.join(" | "));
    assert.ok(concepts("replace localhost:5432 with db:5432 in docker-compose.yml").includes("file"));
    assert.ok(concepts("add Lee to the @oncall-backend group").includes("invit member"));
    // Wherever it stands, unless English writes it so ("force-push").
    assert.deepEqual(concepts("roll back search-indexer to the previous revision"), ["roll", "previou", "revis"]);
    assert.deepEqual(concepts("force-push to main"), ["forc", "push", "branch"]);
  });

  test("what a new issue, message or page is about is what it says, not which tool; so is what the agent remembers about", () => {
    const filed = concepts("create an issue in octo-org/widgets about the broken login link");
    assert.ok(filed.includes("~create") && filed.includes("~issue"), filed.join(" | "));
    assert.ok(!filed.some((own) => /broken|login|~url/.test(own)), filed.join(" | "));
    // So is what the agent is asked to remember or know about.
    assert.ok(!concepts("what do you remember about project Falcon").includes("project"));
    assert.ok(concepts("search the news about the outage").includes("outag"), "else what a request is about counts");
  });

  test("a relative path to a file is a file, its folders no words; 'open bugs' pick tickets; time 'logged' is time spent; who changed it is its history", () => {
    const file = concepts("what's in config/settings.yaml on the staging branch of ops-tools");
    assert.ok(file.includes("file") && !file.includes("config"), file.join(" | "));
    assert.deepEqual(concepts("all open bugs assigned to me jira"), ["~issue", "jira", "~search filter"]);
    assert.ok(!concepts("how much time has been logged on SEC-14 so far").includes("~log"));
    assert.ok(concepts("who bumped the priority on this ticket and when?").includes("histori changelog"));
  });

  test("shell commands say what they do to files and processes; a squash-merge merges; a DM's text is no concept; what is not running is no run", () => {
    assert.ok(concepts("mkdir /home/dana/exports/q3").includes("~create ~directory"));
    assert.ok(concepts("cat ~/work/infra/namespaces.yaml").includes("~get file"));
    assert.ok(concepts("ls -la ./build").includes("~list ~directory"));
    assert.ok(concepts("pkill -f celery on this box").includes("~terminate ~process"));
    assert.ok(concepts("ps aux").includes("~list ~process"));
    assert.ok(concepts("run ./scripts/check-leftovers.sh").includes("terminal ~process ~command"));
    assert.ok(concepts("check with curl what https://old.example.com returns").includes("terminal ~process ~command"));
    assert.ok(concepts("squash-merge infra-live PR 355").includes("merg"));
    const dm = concepts("dm tomás that the freelancer invoice for october is approved");
    assert.ok(dm.includes("~message") && !dm.some((own) => /invoic|approv/.test(own)), dm.join(" | "));
    const pods = concepts("pods in the client-sites namespace that aren't running");
    assert.ok(!pods.includes("~execute"), pods.join(" | "));
    assert.ok(concepts("run the migration job in the batch namespace").includes("~execute"), "a run asked for is one");
  });

  test("a phrasal verb's particle may come after its object; where a name is pointed is not what to do", () => {
    const bring = requestConcepts("bring the database back to how it was last night from the backup");
    assert.ok(bring.find((concept) => concept.own[0] === "bring")?.related.includes("restor"));
    const point = concepts("point api.example.com at the new load balancer");
    assert.ok(!point.some((own) => /load|balanc/.test(own)), point.join(" | "));
  });

  test("'log X into' signs in; 'look over' is a review; 'pull the logs' gets them; a stack trace is an error's, which is an event; stuck is cancelled; a spreadsheet is a file", () => {
    assert.ok(concepts("log docker into our private registry").includes("login author"));
    assert.deepEqual(concepts("log 2 hours into OPS-12"), ["~issue jira", "time spent"], "time logged into a ticket");
    assert.ok(concepts("ask Priya and Tom to look over my pull request").includes("~request review"));
    assert.ok(concepts("pull the logs from the last failed run").includes("~get"));
    assert.ok(!concepts("pull DATA-501 out of the sprint back to the backlog").includes("~get"));
    const related = (query: string, own: string) =>
      requestConcepts(query).find((concept) => concept.own[0] === own)?.related ?? [];
    assert.ok(related("show me the stack trace", "stack").includes("~error"));
    assert.ok(related("the 500 errors in the API logs", "~error").includes("event"));
    assert.ok(related("the build is stuck", "stuck").includes("cancel"));
    assert.ok(related("someone shared a spreadsheet", "spreadsheet").includes("file"));
  });

  test("where a named file is, what a request must not do and what people say are no tool's words; a breakdown is grouped", () => {
    assert.deepEqual(concepts("read the config.yaml in my project folder"), ["~get", "file"]);
    const secret = concepts("store our deploy token somewhere without putting it in the code");
    assert.ok(!secret.includes("code") && !secret.includes("put"), secret.join(" | "));
    assert.ok(concepts("why did spending jump? break it down by service").includes("group"));
    assert.ok(concepts("look up what people say about ECONNRESET errors").includes("~web ~search"));
  });

  test("what the agent was told or already knows is its memory; marking something resolved changes its status; an error tracker's short id is an issue of errors; 'rerun', 'file a bug' and 'cpu' stay words; quotes and host names hold no words", () => {
    const memory = "memori graph entiti observ";
    assert.ok(concepts("what do you already know about the atlas project").includes(memory));
    assert.ok(concepts("forget the old staging URL I gave you").includes(memory));
    assert.ok(concepts("mark the rollout as done").includes("~update statu"));
    assert.ok(!concepts("mark the channel as read").includes("~update statu"));
    assert.ok(concepts("mark FRONTEND-3KZ as resolved").includes("~issue ~error"));
    assert.deepEqual(concepts("look at PROJ-12"), ["look", "~issue jira"]);
    // "Rerun" said is a word of the request, at its full weight; "run it again" and "retry" mean it.
    const weights = (query: string) => requestConcepts(query).map((c) => [c.own.join(" "), c.weight]);
    assert.deepEqual(weights("rerun the failed jobs"), [
      ["rerun", 1],
      ["fail", 1],
      ["job", 1],
    ]);
    assert.deepEqual(weights("retry the build"), [
      ["build", 1],
      ["rerun", 0.6],
    ]);
    // "docs" inside a host name is no documentation; "reading" inside a quoted error message starts no carried text.
    assert.deepEqual(concepts("add a CNAME docs.acme.io -> acme-docs.netlify.app"), [
      "add",
      "cname",
      "domain dn ~document",
    ]);
    const quoted = concepts(`mark the "cannot read properties of undefined (reading 'map')" error as resolved`);
    assert.deepEqual(quoted, ["~error", "~resolve", "~update statu"]);
    assert.deepEqual(concepts('post a message reading "deploy done"'), ["post", "~message"]);
    // A turn of phrase whose words say what they mean too keeps them as words, its meaning added.
    assert.deepEqual(weights("file a bug in MOBILE"), [
      ["file", 1],
      ["~issue", 1],
      ["mobil", 1],
      ["~create ~issue", 0.6],
    ]);
    assert.deepEqual(weights("what is the cpu of web-1").slice(0, 2), [
      ["cpu", 1],
      ["metric", 0.6],
    ]);
  });

  test("who asks is not what they ask, nor why", () => {
    assert.deepEqual(concepts("support lead question: how many orders are pending").slice(0, 3), [
      "~count",
      "order",
      "pend",
    ]);
    assert.deepEqual(requestAction("support lead question: how many orders are pending"), "read");
    assert.ok(concepts("mark this pull request as urgent - the customer waits").includes("~pull request"));
    assert.deepEqual(concepts("which versions are unreleased? want to know if 4.12 is open"), [
      "version",
      "unreleas",
      "~list ~get ~search",
    ]);
  });

  test("a command line run is a process, and so is what holds a port or eats the CPU on this box", () => {
    assert.ok(concepts("run npm test in ~/code/web").includes("terminal ~process ~command"));
    assert.ok(concepts("run `npm test` in ~/web").includes("terminal ~process ~command"));
    assert.ok(!concepts("run the migration").includes("terminal ~process ~command"));
    assert.deepEqual(
      concepts(`run my saved "my bugs" filter`),
      ["~search ~issue jql"],
      "running a filter is no process",
    );
    assert.ok(concepts("kill whatever is on port 3000").includes("~process"));
    assert.ok(!concepts("allow traffic on port 443 from the internet").includes("~process"));
    assert.ok(concepts("what is eating the cpu on this box").includes("~process"));
  });

  test("paths and names say what is acted on: a folder, a file to save to, a bucket's URL, a repository, a README, a ticket's key", () => {
    assert.ok(concepts("whats in /var/log/nginx").includes("~list ~directory"));
    assert.ok(concepts("what are the biggest files under /var/log").includes("~size"));
    assert.ok(concepts("save these notes to ~/draft.md").includes("write file"));
    assert.ok(!concepts("save the draft").includes("write file"));
    assert.deepEqual(concepts("upload ./dist/report.pdf to s3://acme-reports/q2/"), [
      "put object",
      "bucket object",
      "file path",
    ]);
    const listing = concepts("list whats under s3://acme-data/raw/events/");
    assert.ok(listing.includes("bucket object") && !listing.includes("event"), listing.join(" | "));
    assert.ok(concepts("whats in the latest release of acme/cli").includes("~repository"));
    for (const query of [
      "open localhost:3000/signup",
      "replace x in all the files in src/config",
      "rebase release/4.2",
    ])
      assert.ok(!concepts(query).includes("~repository"), query);
    assert.ok(concepts("get me the README of karpathy/nanoGPT").includes("file content"));
    // A key like PAY-1423 names a Jira ticket, which is closed or reopened by moving it to another status.
    assert.deepEqual(concepts("Close PAY-1423"), ["transit statu", "~issue jira"]);
    assert.deepEqual(concepts("close issue #77"), ["~issue", "~update state"]);
  });

  test("turns of phrase say what they mean: a channel's news, a saved filter, slow queries, a database's row, an outage, a comment or review left, a failed build, a note to keep", () => {
    assert.ok(concepts("what happened in #eng this week").includes("histori ~message"));
    const slow = concepts("any slow queries in the mongo logs");
    assert.ok(slow.includes("~mongodb") && !slow.includes("~search"), slow.join(" | "));
    assert.ok(concepts("add a row to the bugs database in notion").includes("~create ~page"));
    assert.ok(!concepts("add a row to the list").includes("~create ~page"));
    assert.ok(concepts("add Jordan Lee to the Hiring database in notion").includes("~create ~page"));
    assert.ok(concepts("is github having an outage").includes("~web ~search"));
    assert.ok(concepts("leave a comment on the Q3 page asking who owns it").includes("~create"));
    assert.ok(concepts("comment on the launch page").includes("~create"));
    assert.ok(concepts("leave a review on PR #482").includes("~create"));
    assert.ok(!concepts("read the review on PR #482").includes("~create"));
    assert.equal(requestAction("comment on the Q4 OKRs page"), "change");
    assert.equal(toolAction(termsOf("API-retrieve-a-comment")), "read");
    assert.ok(concepts("open a github issue in jdoe/dotfiles").includes("~create ~issue"));
    assert.ok(concepts("why did the deploy workflow blow up?").includes("download ~log"));
    assert.ok(!concepts("why did we pick postgres").includes("download ~log"));
    // What the agent is asked to note is its memory, whatever the note says.
    assert.deepEqual(concepts("note that our contact is now jonas"), ["memori graph entiti observ"]);
  });

  test("some words name a service whatever the others say: a ticket is Jira's, articles and what others hit are on the web, library docs are docs", () => {
    const weightOf = (query: string, own: string) =>
      requestConcepts(query).find((concept) => concept.own.join(" ") === own)?.weight;
    assert.equal(weightOf("which tickets are in the 2.5 release", "jira"), 1);
    assert.equal(weightOf("add a sub-task under the checkout epic", "jira"), 1);
    assert.equal(weightOf("find me a couple of articles comparing Snowflake and BigQuery pricing", "~web ~search"), 1);
    assert.equal(weightOf("see if anyone else is hitting ERR_OSSL_EVP_UNSUPPORTED with node 18", "~web ~search"), 1);
    assert.ok(
      top("find me some conference talks about running event sourcing in production").includes(
        "mcp_brave-search_brave_web_search",
      ),
    );
    assert.ok(
      top("check the current prisma docs for how interactive transactions work").some((name) =>
        name.startsWith("mcp_context7_"),
      ),
    );
    // A "doc" is any document (a Notion page), and a folder named docs is a path.
    assert.ok(!concepts("find the onboarding doc in Notion").includes("doc"));
    assert.ok(!concepts("replace 'Acme' with 'Acme Inc.' in the .md files under ./docs").includes("doc librari"));
  });

  test("a word before a colon is what the request is about; a participle is no verb", () => {
    assert.ok(concepts("Prisma: how do you define a many-to-many relation").includes("relat"));
    assert.ok(
      top("Prisma: how do you define a many-to-many relation according to the latest docs").some((name) =>
        name.startsWith("mcp_context7_"),
      ),
    );
    assert.equal(requestAction("sentry: who's assigned to that error"), "read");
    assert.equal(requestAction("all open bugs assigned to me"), undefined);
    assert.equal(requestAction("assign PAY-12 to Dana"), "change");
    assert.equal(requestAction("restore the deleted file"), "change");
  });

  test("more turns of phrase: an emoji is a reaction, a backup taken is a backup, a person asked about again is memory, a ticket moved along changes status, a file made or read by its name", () => {
    const reaction = concepts("throw an :eyes: on the latest message in #support so they know I'm on it");
    assert.ok(reaction.includes("reaction emoji") && reaction.includes("~message"), reaction.join(" | "));
    assert.deepEqual(concepts("take a backup of the disk"), ["backup", "disk"]);
    assert.ok(concepts("take a screenshot of the page").includes("take"));
    assert.ok(
      concepts("who was the vendor contact for our SSO integration again?").includes("memori graph entiti observ"),
    );
    assert.ok(
      concepts("Sam moved from platform to data eng, keep that in mind").includes("memori graph entiti observ"),
    );
    assert.ok(concepts("PAY-2314 is ready for review, move it along").includes("transit statu"));
    assert.ok(concepts("what's in config/settings.yaml in this project?").includes("~get file"));
    assert.ok(concepts("make a TODO.md in ~/projects/orca").includes("write file"));
    assert.ok(concepts("tag issue 77 as a good first issue").includes("label"));
    assert.ok(concepts("get it up for review against develop").includes("~create ~pull request"));
    assert.ok(concepts("who last touched src/billing/invoice.ts in the ledger repo?").includes("commit"));
    assert.ok(concepts("Lena needs to be in #eng-onboarding").includes("invit member"));
    assert.ok(concepts("put the grafana link at the top of #team-payments").includes("bookmark pin"));
    assert.ok(concepts("the Content Calendar needs a new entry: Launch post").includes("~create ~page"));
    assert.ok(concepts("anything crashlooping in checkout ns?").includes("namespac"));
    assert.ok(concepts("the nightly workflow failed again, can it go one more time").includes("rerun"));
    assert.ok(concepts("how much disk is left on my laptop").includes("~process"));
    assert.ok(concepts("mark that TypeError resolved").includes("~update statu"));
    assert.ok(concepts("is github down right now?").includes("~web ~search"));
    // A question may come last, after what the request says of the situation.
    assert.equal(requestAction("the checkout function is throwing timeouts, what do its logs say?"), "read");
    assert.equal(requestAction("the checkout function is throwing timeouts, restart it"), "change");
  });

  test("and more: what a polite comment says, a note for later, an email address, someone pinged on a ticket's change, who has a ticket, a name holding a metric's word", () => {
    assert.deepEqual(concepts("Can you comment on SUP-1923 that the customer confirmed the workaround works"), [
      "comment",
      "~issue jira",
    ]);
    assert.deepEqual(concepts("note for later: Globex Corp's champion is Linda Park"), ["memori graph entiti observ"]);
    assert.ok(concepts("update your notes — Marco moved teams").includes("memori graph entiti observ"));
    const email = concepts("find the customer with email jordan.miles@example.com");
    assert.ok(!email.includes("exampl") && !email.includes("jordan"), email.join(" | "));
    assert.ok(concepts("make sure Ana gets pinged if PAY-88 changes").includes("watcher watch"));
    assert.ok(concepts("who has SUP-7781 rn").includes("~get ~issue assigne"));
    assert.deepEqual(concepts("create channel inc-2291-db-latency"), ["~create", "channel"]);
    assert.ok(concepts("save these retro notes to notes/2024-11-04-retro.md").includes("write file"));
    assert.ok(concepts("laptop fan going crazy, what's eating the cpu?").includes("~process"));
    assert.ok(concepts("who was our contact at Freightly again? i told you").includes("memori graph entiti observ"));
  });

  test("memory asked for by name, the web's kinds of question, reminders, a file by its path, a blocking link", () => {
    assert.deepEqual(concepts("remember: dana at hartley foods is the billing contact"), [
      "memori graph entiti observ",
    ]);
    assert.ok(concepts("forget that Jonah is the on-call lead").includes("memori graph entiti observ"));
    assert.ok(concepts("update memory: marco moved teams").includes("memori graph entiti observ"));
    assert.ok(concepts("what do we have on the northwind client").includes("memori graph entiti observ"));
    assert.ok(top("find recent benchmarks bun vs deno http throughput").includes("mcp_brave-search_brave_web_search"));
    assert.deepEqual(concepts("remind me tomorrow 9am to review lena's migration pr"), ["remind", "schedul later"]);
    assert.ok(concepts("show me what's in ~/projects/ledger/config/settings.prod.yaml").includes("~get file"));
    const adr = concepts("create docs/adr/0007-event-sourcing.md");
    assert.ok(adr.includes("write file") && !adr.includes("doc librari"), adr.join(" | "));
    assert.ok(concepts("add a row to Interview Tracker: Sam Ortiz").includes("~create ~page"));
    assert.ok(concepts("mark SEC-19 as blocking SEC-22").includes("~url ~issue"));
    assert.ok(!concepts("who's the lead on the ANDROID project, need to ask about release cadence").includes("releas"));
  });

  test("a tool named for an HTTP method and a verb does what the verb says", () => {
    assert.equal(toolAction(termsOf("API-post-search")), "read");
    assert.equal(toolAction(termsOf("post_message")), "change");
    assert.equal(toolAction(termsOf("create_post")), "change");
  });
});

// Chinese and Japanese write words without spaces between them: read whole, a request met no tool.
describe("requests and tools in Chinese", () => {
  const withChinese = publicToolsIndex([...publicServers(), ...publicServers(CJK_TOOLS_DIR)]);
  test("a run of Chinese letters is read as its overlapping pairs", () => {
    assert.deepEqual(termsOf("查询天气"), ["查询", "询天", "天气"]);
    assert.deepEqual(termsOf("获取POI详情"), ["获取", "poi", "详情"]);
  });
  for (const [query, answers] of [
    ["查询北京的天气", ["mcp_amap_maps_weather", "mcp_baidu-map_map_weather"]],
    ["把地址转换成经纬度", ["mcp_amap_maps_geo", "mcp_baidu-map_map_geocode"]],
    ["根据IP地址定位", ["mcp_amap_maps_ip_location", "mcp_baidu-map_map_ip_location"]],
    ["从天安门步行到故宫的路线", ["mcp_amap_maps_direction_walking", "mcp_baidu-map_map_directions"]],
    ["推荐一周的菜谱", ["mcp_howtocook_mcp_howtocook_recommendMeals"]],
  ] as const) {
    test(query, () => {
      const got = withChinese.find(query, 3).map((hit) => hit.name);
      assert.ok(
        answers.some((answer) => got.includes(answer)),
        `got ${got.join(", ")}`,
      );
    });
  }
});

describe("recall@3 on the relevance set", () => {
  test("stays at or above the measured 76 of 85 (0.894; the issue's target is 0.9)", () => {
    const recall = recallAt(index, relevanceQueries(), 3);
    const misses = recall.misses.map((miss) => `${miss.query} → ${miss.got.join(", ")}`).join("\n");
    assert.ok(recall.found >= 76, `recall@3 ${recall.found}/${recall.total}; missed:\n${misses}`);
  });
});
