"""The held-out acceptance set for matching: skills and tasks written independently of the tuning set.

Nothing in the matcher was fitted or tuned on this set: the reranker's weights and floor come from
tests/data/matching/matching_dev.json only. The domains differ from the dev set's (no tau2, SQL, k8s,
spreadsheets, calendars, git/CI or Python packaging; DNS, TLS, Terraform, PyTorch, shell, cron,
Android, CSS, JavaScript, Go, Redis, images, e-mail deliverability, baking, payroll and an agent
harness instead), and `test_heldout_set_is_independent_of_the_dev_set` checks the overlap
programmatically. `EXPECTED` maps each task to the ids an expert would inject, most relevant first;
`[]` where nothing applies.
"""

from __future__ import annotations

from ace.skillbook import Skillbook

SKILLS: list[dict] = [
    {
        "section": "context",
        "issue": "After a DNS record is changed (new A record, migrated host), some clients keep reaching the old "
        "IP address for hours because resolvers cache the previous answer until its TTL expires.",
        "keywords": ["dns", "ttl", "resolver_cache", "migration"],
        "insight": "Lower the record's TTL a day before the change; afterwards check with dig @8.8.8.8 and "
        "flush local caches (resolvectl flush-caches, ipconfig /flushdns).",
    },
    {
        "section": "context",
        "issue": "HTTPS requests from curl, Python requests or Java clients fail with 'unable to get local issuer "
        "certificate' although the site opens fine in a browser, because the server sends its leaf "
        "certificate without the intermediate chain.",
        "keywords": ["tls", "certificate_chain", "intermediate_certificate", "ssl_errors"],
        "insight": "Serve the full chain (fullchain.pem, not cert.pem) from the web server; verify with "
        "openssl s_client -showcerts. Never disable certificate verification to work around it.",
    },
    {
        "section": "context",
        "issue": "terraform plan or apply stops with 'Error acquiring the state lock' after an earlier run was "
        "killed or lost its connection, leaving a stale lock in the remote backend (S3 + DynamoDB, GCS, "
        "Terraform Cloud).",
        "keywords": ["terraform", "state_lock", "remote_backend", "iac"],
        "insight": "Confirm that no other apply is running, then terraform force-unlock LOCK_ID with the id "
        "from the error message; do not delete the state file.",
    },
    {
        "section": "context",
        "issue": "Training loss suddenly becomes NaN or inf a few hundred steps into PyTorch training with mixed "
        "precision (float16 autocast), because activations or gradients overflow the fp16 range.",
        "keywords": ["pytorch", "mixed_precision", "nan_loss", "fp16"],
        "insight": "Use torch.cuda.amp.GradScaler with autocast, or bfloat16 on hardware that supports it; "
        "clip gradients after unscaling.",
    },
    {
        "section": "context",
        "issue": "On macOS and Windows, a PyTorch DataLoader with num_workers > 0 in a plain script crashes with "
        "'An attempt has been made to start a new process before the current process has finished its "
        "bootstrapping phase', because worker processes are spawned and re-import the main module.",
        "keywords": ["pytorch", "dataloader", "multiprocessing", "spawn"],
        "insight": "Put the training entry point under if __name__ == '__main__':, and keep datasets picklable.",
    },
    {
        "section": "context",
        "issue": "Bash scripts with set -e keep going after a command fails inside a pipeline (curl ... | jq ...), "
        "because a pipeline's exit status is that of its last command only.",
        "keywords": ["bash", "shell_scripting", "pipefail", "error_handling"],
        "insight": "Start scripts with set -euo pipefail; check PIPESTATUS where one stage may fail on purpose.",
    },
    {
        "section": "context",
        "issue": "A script that works when run by hand fails or does nothing when started by cron, because cron "
        "runs it with a minimal environment: a short PATH, no profile, another working directory and no "
        "virtualenv.",
        "keywords": ["cron", "scheduled_jobs", "environment", "path"],
        "insight": "Use absolute paths to interpreters and files, set PATH at the top of the crontab, cd into the "
        "project explicitly and redirect output to a log file to see the error.",
    },
    {
        "section": "context",
        "issue": "Android apps targeting API 28 or newer fail to load plain http:// URLs with 'CLEARTEXT "
        "communication not permitted by network security policy', although the same requests work on "
        "older devices.",
        "keywords": ["android", "network_security_config", "cleartext_http"],
        "insight": "Move the endpoint to HTTPS; for a local development server only, allow cleartext for that "
        "domain in res/xml/network_security_config.xml.",
    },
    {
        "section": "context",
        "issue": "CSS position: sticky has no effect (the header scrolls away with the page) when an ancestor "
        "element has overflow set to hidden, auto or scroll, or when no top offset is given.",
        "keywords": ["css", "position_sticky", "overflow", "frontend_layout"],
        "insight": "Find the ancestor with overflow in the devtools, remove it or move the sticky element out of "
        "it, and set top: 0.",
    },
    {
        "section": "context",
        "issue": "JavaScript's Array.prototype.sort() without a comparator orders numbers as strings, so "
        "[10, 9, 1, 100] comes back as [1, 10, 100, 9].",
        "keywords": ["javascript", "array_sort", "comparator"],
        "insight": "Pass a comparator: values.sort((a, b) => a - b); use localeCompare for strings.",
    },
    {
        "section": "context",
        "issue": "In Go before 1.22, goroutines or closures started inside a for loop all see the loop "
        "variable's final value, because the variable is shared across iterations.",
        "keywords": ["golang", "goroutines", "loop_variable", "closures"],
        "insight": "Copy the variable inside the loop (v := v) or pass it as an argument; go vet's loopclosure "
        "check reports it.",
    },
    {
        "section": "context",
        "issue": "Redis starts rejecting writes with 'OOM command not allowed when used memory > maxmemory' "
        "because keys were written without an expiry and the eviction policy is noeviction.",
        "keywords": ["redis", "maxmemory", "eviction_policy", "cache_expiry"],
        "insight": "Set a TTL on cache keys and an eviction policy such as allkeys-lru; find the big key "
        "families with redis-cli --bigkeys.",
    },
    {
        "section": "context",
        "issue": "Photos taken on phones appear rotated sideways after they are resized or thumbnailed with "
        "Pillow, because the camera stored the rotation in the EXIF Orientation tag rather than in the "
        "pixels.",
        "keywords": ["images", "exif_orientation", "pillow", "thumbnails"],
        "insight": "Apply ImageOps.exif_transpose(image) before resizing (ImageMagick: -auto-orient), then "
        "strip the tag.",
    },
    {
        "section": "context",
        "issue": "After switching to a new e-mail sending service (Mailgun, SendGrid, SES), messages from the "
        "company domain land in recipients' spam folders because the domain's SPF record does not "
        "include the new service and DKIM is not set up for it.",
        "keywords": ["email_deliverability", "spf", "dkim", "dmarc"],
        "insight": "Add the provider's include: to the SPF TXT record, publish its DKIM keys, then check a "
        "message's Authentication-Results header.",
    },
    {
        "section": "context",
        "issue": "Baking recipes scaled up to three or four times the original quantity come out dense or burnt "
        "when baking time, pan size and leavening are multiplied along with the other ingredients.",
        "keywords": ["baking", "recipe_scaling", "leavening"],
        "insight": "Scale ingredients by weight but bake in several pans of the original size and time; do not "
        "multiply baking soda or powder beyond about 2.5x.",
    },
    {
        "section": "context",
        "issue": "Overtime for hourly employees on a semi-monthly payroll is computed per pay period instead of "
        "per workweek, so weeks over 40 hours that straddle two pay periods are underpaid under the "
        "FLSA.",
        "keywords": ["payroll", "overtime", "flsa", "workweek"],
        "insight": "Compute overtime per fixed workweek and allocate it to the pay period in which the week ends.",
    },
    {
        "section": "harness",
        "issue": "The agent's shell tool runs every command in a fresh shell, so cd, export and activated "
        "virtualenvs from one call are gone in the next call.",
        "keywords": ["shell_tool", "working_directory", "environment_variables"],
        "insight": "Chain dependent commands in one call (cd dir && make) or use absolute paths.",
    },
    {
        "section": "harness",
        "issue": "The agent's shell tool runs every command in a fresh shell, so cd, export and activated "
        "virtualenvs from one call are gone in the next call.",
        "keywords": ["shell_tool", "working_directory", "environment_variables"],
        "insight": "Chain dependent commands in one call (cd dir && make) or use absolute paths.",
    },
    {
        "section": "context",
        "issue": "Gradle builds fail with 'Unsupported class file major version 65' when the machine's default "
        "JDK is 21 but the project's Gradle wrapper is older than 8.5.",
        "keywords": ["gradle", "jdk", "java_toolchain"],
        "insight": "Upgrade the wrapper (./gradlew wrapper --gradle-version 8.5) or set a toolchain.",
        "active": False,
    },
    {
        "section": "context",
        "issue": "Uploads larger than 1 MB fail with 413 Request Entity Too Large behind nginx, because "
        "client_max_body_size defaults to 1m.",
        "keywords": ["nginx", "uploads", "http_413"],
        "insight": "Raise client_max_body_size in the server or location block and reload nginx.",
        "active": False,
    },
]
"""Skills in id order: `context-00001` ... `context-00018`, then `harness-00001` and its twin
`harness-00002` (identical issue and keywords). `context-00017` and `context-00018` are inactive."""

(
    DNS,
    TLS,
    TERRAFORM,
    AMP_NAN,
    DATALOADER,
    PIPEFAIL,
    CRON,
    ANDROID,
    STICKY,
    JS_SORT,
    GO_LOOP,
    REDIS,
    EXIF,
    SPF,
    BAKING,
    OVERTIME,
) = (f"context-{n:05d}" for n in range(1, 17))
GRADLE, NGINX = "context-00017", "context-00018"
SHELL_TOOL, SHELL_TOOL_TWIN = "harness-00001", "harness-00002"

EXPECTED: dict[str, list[str]] = {
    # Tasks in a skill's situation, described in the task's own words.
    "We moved the marketing site to a new server yesterday and updated the A record, but half the office "
    "still lands on the old box. Why, and what should we do next time?": [DNS],
    "I changed api.example.org to point at the new load balancer an hour ago; my laptop gets the new address "
    "but our monitoring probes still hit the old one.": [DNS],
    "requests.get('https://billing.partner.io') raises SSLError: unable to get local issuer certificate, but "
    "Chrome shows the padlock just fine. Fix it properly.": [TLS],
    "Our Java service cannot call the new vendor endpoint: PKIX path building failed. openssl s_client shows "
    "only one certificate in the chain.": [TLS],
    "terraform apply says Error acquiring the state lock, ConditionalCheckFailedException; my previous apply "
    "crashed when the VPN dropped.": [TERRAFORM],
    "After switching my ResNet fine-tuning to autocast with float16 the loss prints nan after ~300 steps. It "
    "was fine in fp32.": [AMP_NAN],
    "Running train.py on my MacBook with DataLoader(num_workers=4) dies with a RuntimeError about starting a "
    "new process before bootstrapping finished.": [DATALOADER],
    "Our deploy.sh has set -e at the top, yet it carried on and deployed after curl failed inside "
    "`curl -s $URL | jq .version`.": [PIPEFAIL],
    "The backup script runs fine when I type ./backup.sh but the 2am crontab entry never produces an archive.": [CRON],
    "My Android app shows an empty list on a Pixel 7 and logcat says CLEARTEXT communication to 10.0.2.2 not "
    "permitted; it works on an old Android 8 phone.": [ANDROID],
    "The table header has position: sticky; top: 0 but scrolls away anyway. The table is inside a div with "
    "overflow: auto.": [STICKY],
    "Why does [5, 25, 100, 1].sort() return [1, 100, 25, 5] in Node?": [JS_SORT],
    "In my Go 1.20 worker pool every goroutine processes the same last URL from the slice; the loop does "
    "`go func() { fetch(u) }()`.": [GO_LOOP],
    "Production Redis returns OOM command not allowed when used memory > maxmemory and the session service "
    "is failing writes.": [REDIS],
    "User avatars uploaded from iPhones show up rotated 90 degrees after our Pillow thumbnail step.": [EXIF],
    "Since we moved our newsletters to SendGrid, Gmail puts them in spam. The domain is acme-tools.com.": [SPF],
    "I'm tripling my grandmother's banana bread recipe for a bake sale; last time the big loaf was raw in the "
    "middle and burnt outside.": [BAKING],
    "A nurse worked 46 hours in the week of March 13-19, but our semi-monthly payroll split that week across "
    "two periods and paid no overtime. Is that right?": [OVERTIME],
    # The harness twins: identical skills come back together, in id order.
    "I ran `cd frontend` in one shell call and `npm test` in the next, and npm says there is no package.json.": [
        SHELL_TOOL,
        SHELL_TOOL_TWIN,
    ],
    # Nothing applies: other topics.
    "Write a limerick about a cat who learns to play the piano.": [],
    "What is the capital of Australia, and why isn't it Sydney?": [],
    "Translate 'the meeting is postponed until further notice' into Spanish and German.": [],
    "Summarise the plot of Moby-Dick in three sentences.": [],
    "How many kilometres is a marathon, and how should a beginner pace the first half?": [],
    "Write a short toast for my sister's wedding.": [],
    "List the planets of the solar system in order of their distance from the sun.": [],
    "Recommend three board games for a family with children aged 6 and 9.": [],
    # Nothing applies: the task is in a skill's domain but not in its situation.
    "Explain to a junior developer what a DNS CNAME record is.": [],
    "Write a Terraform module that creates an S3 bucket with versioning enabled.": [],
    "Give me a bash one-liner that counts the lines of every .py file in a directory.": [],
    "Write a CSS grid layout with a sidebar and a main content area.": [],
    "Implement binary search in Go with tests.": [],
    "What is a good hydration percentage for a beginner's sourdough loaf?": [],
    "Resize all PNG files in this folder to 800 pixels wide.": [],
    "Draft a friendly e-mail inviting the team to Friday's offsite.": [],
    # Nothing applies: the task repeats an inactive skill's situation.
    "./gradlew build fails with Unsupported class file major version 65 on my new laptop with JDK 21.": [],
    "Our upload endpoint behind nginx answers 413 Request Entity Too Large for files over 1 MB.": [],
}


def _categories() -> dict[str, str]:
    """Each task's category, following the groups of `EXPECTED` in order (the comments above)."""
    without_gold = [task for task, gold in EXPECTED.items() if not gold]
    groups = [("irrelevant", 8), ("same_domain", 8), ("draft_trap", 2)]
    assert len(without_gold) == sum(size for _, size in groups), "update the groups with EXPECTED"
    categories = {task: ("tie" if len(gold) > 1 else "relevant") for task, gold in EXPECTED.items() if gold}
    start = 0
    for name, size in groups:
        categories.update((task, name) for task in without_gold[start : start + size])
        start += size
    return categories


CATEGORIES: dict[str, str] = _categories()
"""Each task of `EXPECTED` -> its category: relevant, tie, irrelevant, same_domain (a skill's domain,
not its situation) or draft_trap (an inactive skill's situation)."""


def build_heldout_skillbook() -> Skillbook:
    """A skillbook holding `SKILLS` (ids as in the `SKILLS` docstring)."""
    skillbook = Skillbook()
    for spec in SKILLS:
        skill = skillbook.add_skill(spec["section"], spec["issue"], spec["keywords"], insight=spec["insight"])
        if not spec.get("active", True):
            skillbook.remove_skill(skill.id, "draft, never promoted")
    return skillbook
