/**
 * Values a request may carry (an issue key, a host name, a path…) and turns of phrase ("file a bug", "what people
 * say"), each with what it says the request acts on or asks for: the table ./search-query.ts reads a request with.
 * Data, like ./search-related.ts.
 */

/** Text in quotes. */
export const QUOTED = /(?<![\p{L}\p{N}])(["'‘“])(?:(?!\1).){2,}?\1(?![\p{L}\p{N}])/gu;

/**
 * Values a request may carry and turns of phrase, and what each says it acts on or asks for: an issue key (PROJ-55),
 * a host name (api.example.com), a chat channel (#ops), a person (@dana), a duration logged (3h), "blocked by X-1",
 * "ask Priya to review"… An empty meaning only takes the text out of the words (quoted text, a plain duration). A turn
 * of phrase whose words say what they mean too ("file a bug", "cpu", "to Done") keeps them as words (`keepsWords`). A
 * meaning counts less than a word the request says, unless its `weight` says it counts as much: a turn of phrase that
 * names what is asked for whatever the other words say (a ticket is Jira's, articles are on the web).
 */
export const VALUES: readonly { pattern: RegExp; means: string; keepsWords?: true; weight?: number }[] = [
  // What is taken ("take a backup of the disk") is what to do, unless it is a picture or a look; an emoji (:eyes:) is a
  // reaction.
  {
    pattern: /\btak(?:e|ing)\b(?= (?:a|an|another|one more) (?!screenshot|snapshot|picture|photo|look)\w)/gi,
    means: "",
  },
  { pattern: /(?<!\S):[a-z0-9_+-]+:(?!\S)/gi, means: "reaction emoji" },
  // What is in a folder named by its path is a listing of it, and what is in a named file its text; saving something to
  // a file's path, or making a file by its name ("make a TODO.md"), writes the file.
  {
    pattern: /^\s*(?:what(?:'s|s| is) in|list (?:what(?:'s|s| is) )?in)\b(?= (?:~|\.{0,2})?\/)/gi,
    means: "list directory",
  },
  {
    pattern: /^\s*(?:show(?: me)? |cat |print )?what(?:'s|s| is) in\b(?= (?:~|\.{0,2}\/)?[\w./-]*\.\w{1,5}\b)/gi,
    means: "read file",
  },
  {
    pattern: /\b(?:save|write|dump)\b(?=.*\b(?:to|into|as) (?:~|\.{0,2}\/|[\w./-]+\.\w{1,5}\b))/gi,
    means: "write file",
  },
  {
    pattern:
      /\b(?:make|create|start|add|write) (?:a |an |the )?(?:new )?(?=[\w./~-]+\.(?:md|txt|json|ya?ml|csv|ts|js|py|sh|toml|ini|env|html|css)\b)/gi,
    means: "write file",
  },
  // An email address names a person (its words are no request's).
  { pattern: /\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b/g, means: "email" },
  // Cloud resources by their ids (i-0abc…, vol-…, sg-…) and commits by their hash.
  { pattern: /\bi-[0-9a-f]{8,17}\b/g, means: "instance" },
  { pattern: /\bvol-[0-9a-f]{4,17}\b/g, means: "volume" },
  { pattern: /\bsg-[0-9a-f]{4,17}\b/g, means: "security group" },
  { pattern: /\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b/g, means: "commit" },
  // Quoted text is what to write or look for ("titled 'Invoice CSV export'"), not what to do.
  { pattern: QUOTED, means: "" },
  // An environment variable's name (STRIPE_API_KEY, DATABASE_URL) is a secret or a setting.
  { pattern: /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g, means: "secret variable" },
  // "read access", "write access": a permission, whatever the verb.
  { pattern: /\b(?:read|write|push|admin|edit|view)(?:[- ]only)? access\b/gi, means: "permission access" },
  {
    pattern:
      /\b(?:blocked by|blocks|(?:as )?blocking|duplicates|is duplicated by|relates to|depends on|caused by)\b(?= [A-Z][A-Z0-9]+-\d+)/g,
    means: "link issue",
  },
  // What the agent was told, is to keep in mind or is asked again ("who was the vendor contact again?"), a note for
  // later, "your notes", "update memory" and "what do we have on" are its memory.
  {
    pattern:
      /\bwho (?:did|do) (?:i|we) (?:say|tell you|mention)\b|\b(?:do|did) you have (?:\w+ )?(?:down|noted|on file)\b|\bkeep (?:that|this|it) in mind\b|\bfor future reference\b|^\s*note (?:for later|to self)\b|\byour (?:notes|memory)\b|\b(?:update|add to|check|search|in|from|to) (?:the )?memory\b|\bwhat do (?:we|you) have (?:remembered |stored |saved |noted |down )?(?:on|about)\b|^\s*(?:who|what)\b[^?]*\bagain\b/gi,
    means: "memory graph entities observations",
    weight: 1,
  },
  // What the agent itself remembers (the memory server's knowledge graph), and who moved from one team to another.
  {
    pattern:
      /\b(?:(?:moved|switched|transferred|went) (?:from|over to) (?:the )?\S+(?: \S+)? (?:team )?to|(?:do|did) you (?:\w+ )?(?:remember|know|recall)|you(?: have|'ve)? (?:stored|saved|remembered|noted|know)|(?:remember|note(?: down)?|record|forget(?: about)?) (?:that|this)|^\s*(?:remember|note(?: down)?)(?=\s*$)|i (?:gave|told|sent) you)\b/gi,
    means: "memory graph entities observations",
  },
  // What a system's numbers are: metrics.
  {
    pattern:
      /(?<![\w-])(?:cpu|memory usage|latency|p\d\d|error rate|throughput|utili[sz]ation|[45]xx(?: errors)?|rps|qps|iops)\b/gi,
    means: "metric",
    keepsWords: true,
  },
  { pattern: /^\s*who(?:'s| is| are)? (?:in|on)\b/gi, means: "members" },
  // "ask Priya and Tom to review", "get @sam to look at": a review requested of people.
  {
    pattern:
      /\b(?:ask|get|have|ping|nudge)\b(?=(?: [@\w.-]+){1,4}? to (?:review|look (?:at|over)|go over|approve|check)\b)/gi,
    means: "request reviewers",
  },
  // Marking something resolved or done changes its status (not a chat's read mark, nor a library's name).
  {
    pattern: /\bmark\b(?=(?:\s+\S+){1,4}\s+(?:as )?(?:resolved|fixed|done|closed|complete|completed)\b)/gi,
    means: "update status",
  },
  // A ticket moved along, or said to be done or ready for review, goes to another status.
  {
    pattern:
      /\bmove (?:it|this|that|them)? ?(?:along|across|forward|on|over)\b|(?<=\b[A-Z][A-Z0-9]+-\d+ (?:is|was) )(?:done|ready for (?:review|qa|testing)|in review|blocked)\b/g,
    means: "transition status",
  },
  // Who has a ticket, or is working on it, is read from the ticket.
  {
    pattern: /^\s*who(?:'s| is)? (?:has|owns|working on|assigned to|on)\b(?= [A-Z][A-Z0-9]+-\d)/gi,
    means: "get issue assignee",
  },
  // A ticket named by its key (Jira's PAY-1423) is closed or reopened by moving it to another status.
  { pattern: /\b(?:[Cc]lose|[Rr]eopen|[Rr]esolve)\b(?= [A-Z][A-Z0-9]+-\d)/g, means: "transition status" },
  // Closing or reopening a ticket or a PR changes its state (not a browser's tab).
  {
    pattern:
      /\b(?:close|reopen|resolve)\b(?= (?:the |this |that |my )?(?:issue|ticket|bug|pr|pull request|#\d|[A-Z][A-Z0-9]+-\d))/gi,
    means: "update state",
  },
  // Tickets or PRs picked by what they are ("assigned to me", "labeled bug", "opened this week"): a search.
  {
    pattern:
      /\b(?:assigned to|label(?:l)?ed|tagged|opened|created|reported by|waiting (?:on|for)|with (?:status|label|priority)|(?:open|closed|unresolved|resolved|merged)(?= (?:\w+ )?(?:bugs|issues|tickets|prs|pull requests|incidents|tasks)\b))\b/gi,
    means: "search filter",
  },
  // A saved filter is a search of tickets; what happened in a channel is its history.
  {
    pattern: /\b(?:(?:run|open|pull up|show me|show)\s+)?(?:(?:my|the|our)\s+)?saved\s+(?:jira\s+)?filter\b/gi,
    means: "search issues jql",
  },
  { pattern: /\bwhat (?:happened|did i miss|went on|was said)\b(?= in #)/gi, means: "history messages" },
  // Leaving a comment or a review writes one (a tool that reads them is not asked for); what holds a port, or eats
  // the CPU on this box, is a process.
  {
    pattern:
      /\b(?:leave|add|post|drop|write|submit) (?:a |an )?(?:quick |short )?(?:comments?|reviews?)\b|^\s*comment on\b/gi,
    means: "create",
    keepsWords: true,
  },
  {
    pattern: /\b(?:(?:is|running|listening|something) on|hogging|using|holding|bound to) port \d+\b/gi,
    means: "process",
  },
  {
    pattern: /\b(?:(?:on )?(?:this|my|the local) (?:box|machine|laptop|computer|mac|host)|laptop)\b/gi,
    means: "process",
  },
  // A command line run ("run npm test in ~/web", "run ./scripts/check.sh") is a process in a terminal; so is curl.
  {
    pattern:
      /\b(?:run|execute|exec)\b(?= (?:a |the )?`?(?:(?:npm|npx|yarn|pnpm|make|pytest|cargo|go|git|docker|python3?|node|bash|sh|ls|grep|pip|terraform|kubectl|mvn|gradle|rake|bundle|jest|tsc|eslint)\b|(?:~|\.{1,2})\/))|\bcurl\b/gi,
    means: "terminal process command",
    keepsWords: true,
  },
  // Shell commands said as such: what each does to files or processes.
  { pattern: /(?<![\w-])mkdir(?: -p)?\b/gi, means: "create directory" },
  { pattern: /^\s*`?cat\s+(?=~|\.{0,2}\/)/gi, means: "read file" },
  { pattern: /^\s*`?ls(?:\s+-\w+)*\s+(?=~|\.{0,2}\/)/gi, means: "list directory" },
  { pattern: /\b(?:pkill|killall|kill -9)\b/gi, means: "terminate process" },
  { pattern: /^\s*`?ps(?: aux| -ef)?\b(?! \w)/gi, means: "list process" },
  // Pods or services that are not running (or still are) are asked about by their state, not run.
  { pattern: /(?:\bnot|n['’]t|\bno longer|\bstill)\s+running\b/gi, means: "" },
  // A bucket's URL (s3://…) names objects in it, and what is uploaded to it is put there; a row of a database
  // (Notion's) is a page in it.
  { pattern: /\b(?:upload|copy|put|push)\b(?=.*\b(?:s3|gs):\/\/)/gi, means: "put object" },
  { pattern: /\b(?:s3|gs|az|abfss?):\/\/\S+/gi, means: "bucket object" },
  {
    pattern:
      /\b(?:add|insert|create|put)\b(?= (?:a |an |one )?(?:new )?(?:row|entry|record|item)s? (?:to|in|into) (?:the |our |my )?(?:\S+ ){0,3}(?:database|db|tracker|calendar|table)\b)|\badd\b(?= (?:\S+ ){1,4}?to (?:the |our |my )?(?:\S+ ){0,3}database\b)/gi,
    means: "create page",
  },
  // A new entry of a tracker or a calendar is a page of a database.
  { pattern: /\b(?:a |an )?new (?:entry|row|record|item)\b/gi, means: "create page" },
  // Why something failed is in its logs.
  {
    pattern: /^\s*why (?:did|does|is|was|do|are)\b(?=.*\b(?:fail|blow|blew|break|broke|crash|red)\w*)/gi,
    means: "download logs",
  },
  // A repository's README is a file to read.
  { pattern: /\breadme(?:\.md)?\b/gi, means: "file contents", keepsWords: true },
  // The biggest of something is asked of its sizes.
  { pattern: /\b(?:biggest|largest|heaviest)\b/gi, means: "size" },
  // A collection holds a database's documents (its name is no word of the request); "ns" is a cluster's namespace.
  { pattern: /\b(?:the )?\S+ collection\b/gi, means: "mongodb collection" },
  { pattern: /\bns\b/gi, means: "namespace" },
  // Slow queries are in a database's log; an outage of a service is news on the web.
  { pattern: /\bslow (?:quer(?:y|ies)|ops|operations)\b/gi, means: "log" },
  {
    pattern:
      /\b(?:outage|down for (?:anyone|everyone|others)|(?:check|search|look(?: it)? up|google)(?: it)? (?:online|on the web|the internet|the news))\b/gi,
    means: "web search",
    weight: 1,
    keepsWords: true,
  },
  // Branches by the names most have.
  {
    pattern: /\b(?:master|main|develop|trunk)\b(?! (?:contact|page|point|menu|thing|reason|goal|idea)s?\b)/g,
    means: "branch",
  },
  { pattern: /\bbetween\b(?= (?:\S+ ){1,3}and \S+)/gi, means: "compare" },
  {
    pattern:
      /\b(?:run|kick|start|trigger)\b(?=.*\bagain\b)|\bre-run\b|\bre-?(?:try|trigger)\b|\b(?:one more time|once more)\b/gi,
    means: "rerun",
  },
  // A token, key or password to keep ("store our deploy token", "add the Stripe key securely"): a secret.
  {
    pattern: /\b(?:store|save|keep|add|put|set)\b(?= (?:\S+ ){0,3}(?:token|key|password|credentials?|api key)s?\b)/gi,
    means: "secret",
  },
  { pattern: /\b(?:every|each|any|all) (?:places?|usages?|calls?|callers?|references?)\b/gi, means: "search code" },
  { pattern: /\b(?:above|below|ahead of)\b(?=.*\b(?:backlog|priority|order|rank)\b)/gi, means: "rank" },
  { pattern: /\bfix (?:the |a |that )?typo\b/gi, means: "update edit" },
  { pattern: /\bonly (?:\S+ ){1,2}(?:can|should|will|gets to) see\b/gi, means: "ephemeral" },
  { pattern: /\bpil(?:e|ing) up\b|\b(?:old|stale)\b(?=.*\bbucket\b)/gi, means: "lifecycle expire" },
  { pattern: /\bpoint\b(?= \S+\.\S+ (?:at|to)\b)/gi, means: "dns record" },
  // What people say about something is on the web.
  {
    pattern:
      /\bwhat (?:people|others|folks|devs|developers|users|everyone|the internet) (?:\w+ly )?(?:say|said|think|are saying|write|recommend)\b|\b(?:anyone|someone|people|others) else (?:is |are )?(?:hitting|seeing|having|getting)\b/gi,
    means: "web search",
    weight: 1,
  },
  // Articles, talks, news and known vulnerabilities are found on the web, as are benchmarks, salaries, prices and
  // guidance.
  {
    pattern:
      /\b(?:articles?|blog posts?|(?:conference )?talks|tutorials?|news|cves?|vulnerabilit(?:y|ies)|benchmarks?|salar(?:y|ies)|going rate|pricing|price per|guidance|backdoor(?:ed)?|what'?s new in)\b/gi,
    means: "web search",
    weight: 1,
    keepsWords: true,
  },
  // Whether a service is down for everyone, the latest on something, what is best reviewed or costs under a price: the
  // web's.
  {
    pattern:
      /^\s*is \S+ (?:down|up|having (?:an? )?(?:outage|issues|problems))\b|\bwhat(?:'s| is) the latest (?:on|about|with|news)\b|\b(?:best|top)[- ](?:reviewed|rated)\b|\bunder (?:\d+|[$€£]\d+) (?:euros?|dollars?|bucks|usd|eur|gbp)\b/gi,
    means: "web search",
    weight: 1,
  },
  { pattern: /\b(?:going to|on track to)\b(?=.*\b(?:bill|spend|cost)\w*)/gi, means: "forecast" },
  {
    pattern:
      /\blog (?:(?!\d|time\b|hours?\b|minutes?\b)\S+ ){1,3}?into\b|\blog(?:ged)? ?in(?:to)?\b|\bsign(?:ed)? in(?:to)?\b/gi,
    means: "login authorization",
  },
  { pattern: /\bwithout (?:an? |\d+ |two |2 )?(?:approv|review)\w*/gi, means: "protection require review" },
  // What a request must not do ("without putting it in the code") says nothing of the tool that does it.
  { pattern: /\bwithout \w+ing\b.*$/gi, means: "" },
  { pattern: /\bbreak (?:\S+ )?down by\b/gi, means: "group by" },
  { pattern: /\b(?:above|below|before|after|ahead of)\b(?= [A-Z][A-Z0-9]+-\d)/g, means: "rank" },
  { pattern: /\bopen (?:port )?\d{2,5}\b/gi, means: "port ingress" },
  // Library documentation, said as "docs" or "documentation", is what a request asks for whatever else it says; a "doc"
  // is any document.
  { pattern: /(?<![\w./-])doc(?![\w/-]|\.\w)/gi, means: "docs library" },
  {
    pattern: /(?<![\w./-])(?:docs|documentation|api reference)(?![\w/-]|\.\w)/gi,
    means: "docs library",
    keepsWords: true,
  },
  { pattern: /\bolder than \d+ ?(?:day|week|month|year|d)s?\b/gi, means: "lifecycle expire" },
  { pattern: /\bkeep\b(?=.*\b\d+ ?(?:day|week|month|year)s?\b)/gi, means: "retention" },
  // Someone pinged if a ticket changes watches it.
  {
    pattern: /\b(?:gets?|be|get) (?:pinged|notified|alerted|emailed)\b(?=.*\b[A-Z][A-Z0-9]+-\d+)/g,
    means: "watcher watch",
  },
  {
    pattern: /\b(?:page|alert|notify|ping|wake) (?:me|us|someone|the team|on-call)\b(?= (?:if|when|whenever))/gi,
    means: "alarm",
  },
  { pattern: /(?<!\S)(?:~|\.{1,2})?\/(?:[\w.-]+\/)*[\w.-]+\/?/g, means: "file path" },
  // What to be reminded of ("remind me tomorrow to review lena's PR") is no request's words.
  { pattern: /(?<=\bremind (?:me|us|everyone|the team|@?[\w.-]+)\b.*?\bto\b).*$/gi, means: "" },
  // A time window in the past filters what is read (logs of the last hour); one ahead is a time to do something at.
  {
    pattern:
      /\b(?:(?:in|over|during|for|from) )?(?:the )?(?:last|past|previous) (?:\d+ ?)?(?:minute|min|hour|h|day|d|week|month|year|night)s?\b|\b(?:today|yesterday|this (?:morning|week|month|quarter|year)|so far)\b/gi,
    means: "time",
  },
  {
    pattern:
      /\b(?:tomorrow|tonight|next (?:week|month|monday|tuesday|wednesday|thursday|friday)|on (?:monday|tuesday|wednesday|thursday|friday)|at \d{1,2}(?::\d\d)? ?(?:am|pm)?|in \d+ (?:minute|hour|day)s?|for (?:the )?next \d+ (?:minute|hour|day)s?)\b/gi,
    means: "schedule later",
  },
  { pattern: /\b\d+(?:\.\d+)? ?%/g, means: "metric threshold" },
  // "to In Review", "to Done": a state a ticket moves to.
  {
    pattern: /\bto (?:in [a-z]+|done|blocked|closed|resolved|review|todo|to do|qa|backlog)\b/gi,
    means: "status transition",
    keepsWords: true,
  },
  {
    pattern:
      /\b(?:file|open|raise|log|make|create|write|cut) (?:a |an |the )?(?:new )?(?:\w+ )?(?:bug|ticket|issue)\b/gi,
    means: "create issue",
    keepsWords: true,
  },
  // A problem written up is a new issue; an issue or a PR tagged is labelled; a branch put up for review is a new PR.
  { pattern: /\bwrite (?:it|this|that) up\b/gi, means: "create issue" },
  { pattern: /\btag\b(?= (?:issue|pr|pull request|ticket|#)\S*)/gi, means: "label" },
  { pattern: /\b(?:(?:get|put|send) \S+ )?up for review\b/gi, means: "create pull request" },
  // "add Maya to #design", "add Lee to the @frontend group": people into a channel or a group.
  { pattern: /\badd\b(?=[^#@]* to (?:the )?[#@])/gi, means: "invite member" },
  // Someone who needs to be in #a is invited to it; what goes at the top of a channel is a bookmark.
  { pattern: /\b(?:needs? to|should|wants? to) be in\b(?= #)/gi, means: "invite member" },
  { pattern: /\b(?:at|to) the top of\b(?= #)/gi, means: "bookmark pin" },
  // Who last touched a file is in its commits.
  {
    pattern: /\bwho (?:last )?(?:touched|changed|edited|modified|wrote|committed)\b(?=.*\.\w{1,5}\b)/gi,
    means: "commits",
  },
  // Where a named file is ("config.yaml in my project folder") says which file, not what to do with it.
  {
    pattern:
      /(?<=\.[a-z]{1,5}\b.*?)\b(?:in|under|from|inside) (?:my|the|our|this|that) (?:\w+ )?(?:folder|directory|dir)\b/gi,
    means: "",
  },
  {
    pattern:
      /\b(?!\p{Lu}\p{Ll}*\.js\b)(?:[\w.-]+\/)*[\w-]+\.(?:json|ya?ml|md|txt|ts|tsx|js|mjs|py|go|rs|java|rb|csv|pdf|png|jpe?g|gif|svg|log|toml|ini|env|sh|html|css|xml|sql|docx?|xlsx?)\b/giu,
    means: "file",
  },
  // "in the ledger repo": a repository by its name alone.
  { pattern: /\b(?:in|on|for|of) (?:the |our )?[\w.-]+ (?:repo|repository)\b/gi, means: "repository" },
  // A repository named by its owner ("acme/web"): files and paths are read before; a folder ("src/config"), a branch
  // ("release/4.2") or a host's path ("localhost:3000/signup") is none.
  {
    pattern:
      /(?<![\w./~:-])(?!(?:src|lib|app|apps|test|tests|docs|config|dist|build|bin|etc|var|home|usr|tmp|packages|scripts|public|assets|release|feature|hotfix|bugfix|fix)\/)[a-z0-9][\w.-]*\/[a-z0-9][\w.-]*(?![\w/.-])/gi,
    means: "repository",
  },
  { pattern: /(?:^|\s)\+1\b/g, means: "vote" },
  // An identifier written in camelCase (parseInvoice, OutOfMemory; not a product's name like GitHub) is code or an
  // error's name.
  { pattern: /\b\p{Ll}+(?:\p{Lu}\p{Ll}*)+\b|\b(?:\p{Lu}\p{Ll}+){3,}\b/gu, means: "code" },
  { pattern: /\b[A-Z][A-Z0-9]{1,9}-\d+\b/g, means: "issue jira" },
  // A "ticket", a story, an epic or a fix version is a tracker's word (an error tracker's issues are no tickets).
  { pattern: /\b(?:tickets?|epics?|stories|fix versions?)\b/gi, means: "jira", keepsWords: true, weight: 1 },
  // An error tracker's short id (FRONTEND-3KZ): an issue of errors.
  { pattern: /\b[A-Z][A-Z0-9]+-(?=[A-Z0-9]*[A-Z])(?=[A-Z0-9]*\d)[A-Z0-9]{2,8}\b/g, means: "issue error" },
  { pattern: /(?:^|\s)#\d+\b/g, means: "issue" },
  { pattern: /\bhttps?:\/\/\S+/gi, means: "url" },
  {
    pattern: /(?<![/@\w.])(?:[a-z0-9-]+\.)+(?:com|net|org|io|dev|app|co|ai|cloud|internal|local)\b/gi,
    means: "domain dns record",
  },
  { pattern: /\b\d{1,3}(?:\.\d{1,3}){3}\b/g, means: "ip address" },
  { pattern: /(?:^|\s)#[a-z][\w-]*/gi, means: "channel" },
  { pattern: /(?:^|\s)@[a-z][\w.-]*/gi, means: "user" },
  // Who changed something, and when, is in its history.
  {
    pattern: /^\s*who (?:changed|bumped|edited|updated|moved|set|modified|deleted|removed|raised|lowered)\b/gi,
    means: "history changelog",
  },
  // Time or hours "logged" are time spent on work, not a log's lines.
  {
    pattern: /\b(?:time|hours|minutes)\b(?: \S+){0,3}? logged\b|\blogged (?:time|hours|minutes)\b/gi,
    means: "time spent",
  },
  // A duration is time spent only where the request logs it ("log 3h on OPS-221"); else it is how long something lasts.
  {
    pattern:
      /\b(?:log|logged|spent|worked|book|booked|bill|track)\b.*?\b\d+(?:\.\d+)?\s*(?:h|hrs?|hours?|m|mins?|minutes?)\b|\b\d+(?:\.\d+)?\s*(?:h|hrs?|hours?|m|mins?|minutes?)\b(?=.*\b(?:log|logged|spent|worked)\b)/gi,
    means: "time spent",
  },
  { pattern: /\b\d+(?:\.\d+)?\s*(?:h|hrs?|hours?|m|mins?|minutes?|days?)\b/gi, means: "" },
  { pattern: /[$€£]\s?\d[\d,.]*/g, means: "cost" },
  {
    pattern:
      /\bpull\b(?! request)(?= (?:\S+ ){0,4}?(?:docs?|documentation|logs?|data|metrics|reports?|numbers|files?|list|details|info|stats)\b)/gi,
    means: "get",
  },
];
