"""Built-in vocabulary of the demo corpus: domains, subjects, facts, sites, people, templates.

Everything the generator writes is assembled from these tables, so the default corpus never
depends on files outside the project. The subjects are everyday topics a query panel would ask
about; the numbers attached to them are drawn at random per seed and are *synthetic*: every
generated page says so in its footer. Hosts use the reserved ``.example`` top-level domain
(RFC 2606) so no real site is ever misquoted.

Templates use ``{s}`` (subject), ``{S}`` (subject, capitalised), ``{v}`` (formatted value),
``{c}`` (condition clause, may be empty), ``{site}`` (site display name) and ``{year}``.
They are written so that the subject never has to agree with a verb (``For {s}, ...``,
``The ... of {s} ...``) because subjects mix singular and plural nouns.
"""

from __future__ import annotations

from dataclasses import dataclass

DOMAINS: tuple[str, ...] = (
    "health",
    "finance",
    "legal",
    "consumer_products",
    "technology",
    "news",
)
HIGH_RISK_DOMAINS: tuple[str, ...] = ("health", "finance", "legal")
ENGINES: tuple[str, ...] = ("perplexity", "copilot", "google_ai_overview", "inhouse_rag")
WEB_ENGINES: tuple[str, ...] = ("perplexity", "copilot", "google_ai_overview")
ENGINE_PREFIX: dict[str, str] = {
    "perplexity": "pplx",
    "copilot": "cop",
    "google_ai_overview": "aio",
    "inhouse_rag": "rag",
}
SOURCE_TYPES: tuple[str, ...] = ("web_page", "news", "scholarly", "forum", "vendor", "kb_doc")
SOURCE_ROLES: tuple[str, ...] = (
    "affiliate",
    "first_party",
    "sponsored",
    "independent",
    "user_generated",
)


@dataclass(frozen=True)
class Metric:
    """One measurable fact about a subject, with how pages and answers phrase it.

    ``unit`` names a formatter in :func:`format_value`; ``lo``/``hi``/``step`` bound the
    synthetic value. ``page`` templates are how a source states the fact, ``claim`` templates how
    an answer restates it; ``conds`` are qualifying clauses a page may attach and an answer may
    drop (which makes the answer's claim only partially supported).
    """

    key: str
    unit: str
    lo: float
    hi: float
    step: float
    page: tuple[str, ...]
    claim: tuple[str, ...]
    conds: tuple[str, ...]


def _m(key, unit, lo, hi, step, page, claim, conds) -> Metric:
    return Metric(key, unit, lo, hi, step, tuple(page), tuple(claim), tuple(conds))


SUBJECTS: dict[str, tuple[str, ...]] = {
    "health": (
        "ibuprofen", "acetaminophen", "naproxen", "melatonin", "vitamin D3",
        "magnesium glycinate", "iron supplements", "zinc lozenges", "omega-3 fish oil",
        "caffeine tablets", "loratadine", "cetirizine", "low-dose aspirin",
        "creatine monohydrate", "probiotic capsules", "vitamin B12", "folic acid",
        "calcium carbonate", "diphenhydramine", "turmeric extract",
    ),
    "finance": (
        "index funds", "high-yield savings accounts", "Roth IRAs", "401(k) plans",
        "certificates of deposit", "balance-transfer credit cards", "personal loans",
        "health savings accounts", "municipal bonds", "Treasury bills", "robo-advisors",
        "target-date funds", "529 college savings plans", "home equity lines of credit",
        "buy-now-pay-later plans", "money market funds", "fixed annuities",
        "dividend ETFs", "student loan refinancing", "prepaid debit cards",
    ),
    "legal": (
        "small claims cases", "security deposit disputes", "non-compete agreements",
        "trademark registrations", "eviction notices", "unpaid wage claims", "will contests",
        "traffic ticket appeals", "copyright takedown notices", "lease renewals",
        "workers' compensation claims", "consumer refund disputes",
        "data breach notifications", "jury duty deferrals", "name change petitions",
        "prenuptial agreements", "provisional patent applications", "noise complaints",
        "HOA fee disputes", "freelance contract disputes",
    ),
    "consumer_products": (
        "the Aurora X2 wireless earbuds", "the Nimbus 5 robot vacuum",
        "the Kestrel HEPA air purifier", "the Tandem City e-bike", "the Fjord 3 running shoes",
        "the Lumen smart bulb kit", "the Cascade Duo espresso machine",
        "the Orbit S smartwatch", "the Harbor hybrid mattress", "the Pivot standing desk",
        "the Quill 7 e-reader", "the Summit 40L hiking backpack",
        "the Glide sonic toothbrush", "the Beacon video doorbell",
        "the Ember cast-iron skillet", "the Drift portable speaker",
        "the Atlas carry-on suitcase", "the Verde 6-quart air fryer",
        "the Halo baby monitor", "the Brûlée Pro kitchen torch",
    ),
    "technology": (
        "Python 3.13", "PostgreSQL 17", "the Linux 6.12 LTS kernel", "Kubernetes 1.31",
        "TLS 1.3", "HTTP/3", "Android 15", "iOS 18", "Node.js 22", "Wi-Fi 7 routers",
        "passkeys", "WebAssembly", "Rust 1.80", "Java 21", "Ubuntu 24.04 LTS", "SQLite",
        "Docker Desktop", "Windows 11 24H2", "the Chromium browser engine", "USB4 docks",
    ),
    "news": (
        "the city transit fare increase", "the regional wildfire evacuations",
        "the national rail strike", "the coastal flood barrier project",
        "the central bank rate decision", "the water main repairs downtown",
        "the state minimum wage change", "the airport runway expansion",
        "the school bus driver shortage", "the offshore wind auction",
        "the county budget vote", "the river bridge closure", "the week-long heat advisory",
        "the hospital merger", "the port congestion", "the stadium financing deal",
        "the library hours cut", "the election recount", "the new bike lane network",
        "the winter storm power outages",
    ),
}

METRICS: dict[str, tuple[Metric, ...]] = {
    "health": (
        _m("daily_limit", "mg", 50, 4000, 50,
           ["For most healthy adults, the maximum daily intake of {s} is {v}{c}.",
            "Current guidance caps {s} at {v} per day{c}.",
            "Clinicians generally advise that adults take no more than {v} of {s} in a day{c}."],
           ["The maximum daily intake of {s} for adults is {v}{c}.",
            "Adults are advised not to exceed {v} of {s} per day{c}."],
           [" unless a clinician advises otherwise",
            " for people without kidney or liver disease"]),
        _m("onset", "minutes", 10, 120, 5,
           ["Most people notice the effect of {s} within about {v}{c}.",
            "The effect of {s} typically begins {v} after a dose{c}."],
           ["For {s}, the effect usually starts within {v}{c}.",
            "You can expect {s} to take effect in roughly {v}{c}."],
           [" when taken on an empty stomach", " at the standard dose"]),
        _m("side_effects", "percent", 1, 35, 1,
           ["In pooled trial data, about {v} of participants taking {s} reported mild side "
            "effects{c}.",
            "Mild side effects were reported by {v} of people on {s} in the trials we "
            "reviewed{c}."],
           ["Roughly {v} of people who take {s} report mild side effects{c}.",
            "Mild side effects affect about {v} of users of {s}{c}."],
           [" such as nausea or headache", " during the first week of use"]),
        _m("half_life", "hours", 1, 48, 1,
           ["The elimination half-life of {s} is approximately {v}{c}.",
            "For {s}, the body clears half of a dose in about {v}{c}."],
           ["The half-life of {s} is about {v}{c}.",
            "For {s}, half of a dose is cleared in roughly {v}{c}."],
           [" in healthy adults", ", although it is longer in adults over 65"]),
        _m("use_share", "percent", 2, 60, 1,
           ["A {year} national survey found that {v} of adults had used {s} in the past year{c}.",
            "Survey data from {year} show {v} of adults reporting use of {s} in the prior "
            "year{c}."],
           ["About {v} of adults used {s} in the past year{c}.",
            "Use of {s} is common: roughly {v} of adults took it in the last year{c}."],
           [" according to self-reported data", ", with higher rates among older adults"]),
        _m("monthly_cost", "dollars", 3, 60, 1,
           ["A one-month supply of {s} costs about {v} at major pharmacies{c}.",
            "Expect to pay around {v} for a month of {s}{c}."],
           ["A one-month supply of {s} typically costs around {v}{c}.",
            "A month of {s} costs roughly {v}{c}."],
           [" for the generic version", " before insurance"]),
    ),
    "finance": (
        _m("annual_fee", "percent2", 0.03, 2.5, 0.01,
           ["The average annual fee for {s} was {v} of assets in {year}{c}.",
            "Across the products we track, the annual fee on {s} averages {v}{c}."],
           ["The average annual fee on {s} is about {v} of assets{c}.",
            "For {s}, you should expect annual fees of roughly {v}{c}."],
           [" according to industry filings", " excluding advisory fees"]),
        _m("typical_yield", "percent2", 0.5, 7.5, 0.05,
           ["Typical yields on {s} were around {v} at the end of the third quarter{c}.",
            "For {s}, yields clustered near {v} in recent months{c}."],
           ["The typical yield on {s} is currently about {v}{c}.",
            "For {s}, recent yields have been close to {v}{c}."],
           [" before taxes", " for balances above $10,000"]),
        _m("annual_limit", "dollars", 2000, 150000, 500,
           ["The annual limit for {s} is {v} for {year}{c}.",
            "For {year}, the cap on {s} stands at {v}{c}."],
           ["The annual limit for {s} is {v}{c}.",
            "For {s}, the yearly cap is {v}{c}."],
           [" for savers under 50", " per individual account holder"]),
        _m("early_penalty", "percent", 1, 25, 1,
           ["Ending {s} early typically triggers a penalty of {v}{c}.",
            "For {s}, the early-exit penalty is usually {v}{c}."],
           ["Getting out of {s} early costs a penalty of about {v}{c}.",
            "The early-exit penalty on {s} is around {v}{c}."],
           [" of the amount withdrawn", " on top of ordinary income tax"]),
        _m("min_deposit", "dollars", 0, 5000, 50,
           ["The minimum opening deposit for {s} is {v} at most large providers{c}.",
            "Most providers ask for at least {v} to open {s}{c}."],
           ["You need about {v} to get started with {s}{c}.",
            "The minimum opening deposit for {s} is typically {v}{c}."],
           [", although some online providers waive it", " at branch-based banks"]),
        _m("household_share", "percent", 3, 70, 1,
           ["Roughly {v} of U.S. households held {s} in {year}{c}.",
            "Federal survey data put the share of households with {s} at {v}{c}."],
           ["About {v} of households hold {s}{c}.",
            "Roughly {v} of U.S. households use {s}{c}."],
           [" according to the latest federal survey", " among households with earned income"]),
    ),
    "legal": (
        _m("filing_deadline", "days", 5, 180, 5,
           ["In most states, the deadline for {s} is {v} after the triggering event{c}.",
            "For {s}, the filing window generally closes {v} after the event{c}."],
           ["You generally have {v} to file for {s}{c}.",
            "The filing deadline for {s} is usually {v}{c}."],
           [", although some states allow extensions", ", counted in calendar days"]),
        _m("limitations", "years", 1, 10, 1,
           ["The statute of limitations for {s} is typically {v}{c}.",
            "For {s}, most states set a limitations period of {v}{c}."],
           ["The statute of limitations for {s} is {v}{c}.",
            "For {s}, you have about {v} before the limitations period runs out{c}."],
           [" from the date of discovery", " in most but not all states"]),
        _m("filing_fee", "dollars", 30, 450, 5,
           ["Court filing fees for {s} range up to {v}{c}.",
            "Expect a filing fee of about {v} for {s}{c}."],
           ["Filing for {s} costs about {v}{c}.",
            "The court filing fee for {s} is roughly {v}{c}."],
           [", and fee waivers are available for low-income filers", " in county courts"]),
        _m("max_amount", "dollars", 2500, 25000, 500,
           ["For {s}, the maximum amount you can claim is {v}{c}.",
            "The cap on what you can recover in {s} is {v}{c}."],
           ["The maximum you can claim in {s} is {v}{c}.",
            "For {s}, recoveries are capped at {v}{c}."],
           [" in most states", " for individuals rather than businesses"]),
        _m("processing_time", "weeks", 2, 52, 1,
           ["Processing {s} takes about {v} on average{c}.",
            "For {s}, the typical time to a decision is {v}{c}."],
           ["Expect {s} to take about {v} to resolve{c}.",
            "The typical processing time for {s} is {v}{c}."],
           [" once all documents are filed", " in urban courts"]),
        _m("success_rate", "percent", 10, 90, 1,
           ["Court statistics show that {v} of {s} end in favour of the filer{c}.",
            "For {s}, filers prevailed in {v} of recorded cases{c}."],
           ["About {v} of {s} succeed{c}.",
            "For {s}, the filer wins in roughly {v} of cases{c}."],
           [" when the filer has a lawyer", " in cases that reach a hearing"]),
    ),
    "consumer_products": (
        _m("battery_life", "hours", 4, 60, 1,
           ["In our lab test, the battery of {s} lasted {v}{c}.",
            "For {s}, we measured {v} of battery life{c}."],
           ["The battery life of {s} is about {v}{c}.",
            "For {s}, you can expect around {v} of battery life{c}."],
           [" with noise cancelling switched off", " at 50 percent volume"]),
        _m("launch_price", "dollars", 29, 1499, 10,
           ["At launch, {s} cost {v}{c}.",
            "The list price for {s} was {v} when it went on sale{c}."],
           ["The launch price of {s} was {v}{c}.",
            "For {s}, the list price is {v}{c}."],
           [" in the United States", " before holiday discounts"]),
        _m("warranty", "years", 1, 10, 1,
           ["The manufacturer covers {s} with a warranty of {v}{c}.",
            "For {s}, the warranty runs {v}{c}."],
           ["The warranty on {s} lasts {v}{c}.",
            "For {s}, you get a {v} warranty{c}."],
           [" if you register the product", " for the original purchaser"]),
        _m("weight", "grams", 40, 9000, 10,
           ["On our scale, {s} weighed {v}{c}.",
            "The weight of {s} is {v}{c}."],
           ["The weight of {s} is about {v}{c}.",
            "For {s}, the weight comes in at roughly {v}{c}."],
           [" without accessories", ", including the charging case"]),
        _m("return_window", "days", 14, 100, 1,
           ["The retailer accepts returns of {s} within {v}{c}.",
            "For {s}, the return window is {v}{c}."],
           ["You can return {s} within {v}{c}.",
            "The return window for {s} is {v}{c}."],
           [" if the packaging is intact", " of delivery"]),
        _m("return_rate", "percent", 1, 20, 1,
           ["Retail data show that {v} of units of {s} were returned{c}.",
            "For {s}, the return rate reached {v}{c}."],
           ["About {v} of buyers return {s}{c}.",
            "The return rate for {s} is around {v}{c}."],
           [" in the first quarter after launch", ", mostly because of fit or sizing"]),
    ),
    "technology": (
        _m("support_window", "years", 1, 12, 1,
           ["Security updates for {s} are planned for {v} after release{c}.",
            "For {s}, the support window is {v}{c}."],
           ["For {s}, security updates continue for {v}{c}.",
            "The support window for {s} is {v}{c}."],
           [" under the standard support policy", ", with paid extended support beyond that"]),
        _m("release_cadence", "weeks", 2, 52, 1,
           ["A new minor release of {s} ships every {v}{c}.",
            "For {s}, the project publishes updates about every {v}{c}."],
           ["For {s}, a new minor release ships every {v}{c}.",
            "Updates for {s} arrive roughly every {v}{c}."],
           [" on a fixed schedule", " outside of emergency security fixes"]),
        _m("adoption", "percent", 2, 85, 1,
           ["Telemetry from {year} shows {v} of active installations running {s}{c}.",
            "For {s}, adoption reached {v} of eligible devices{c}."],
           ["About {v} of installations now run {s}{c}.",
            "Adoption of {s} stands at roughly {v}{c}."],
           [" among enterprise users", " according to vendor telemetry"]),
        _m("speedup", "percent", 3, 60, 1,
           ["Benchmarks show that {s} is {v} faster than the previous release{c}.",
            "For {s}, the measured speed-up over the prior version was {v}{c}."],
           ["For {s}, benchmarks show a speed-up of about {v} over the predecessor{c}.",
            "Upgrading to {s} makes workloads roughly {v} faster{c}."],
           [" on the standard benchmark suite", " for read-heavy workloads"]),
        _m("max_size", "gb", 1, 512, 1,
           ["The maximum supported file size for {s} is {v}{c}.",
            "For {s}, files are limited to {v}{c}."],
           ["Files of up to {v} are supported by {s}{c}.",
            "The file size limit for {s} is {v}{c}."],
           [" on 64-bit systems", " with the default configuration"]),
        _m("cve_count", "count", 1, 140, 1,
           ["The vulnerability database lists {v} CVEs fixed in {s} during {year}{c}.",
            "For {s}, {v} security flaws were patched last year{c}."],
           ["{v} security vulnerabilities were fixed in {s} last year{c}.",
            "For {s}, about {v} CVEs were patched in the past year{c}."],
           [", most of them rated medium severity", ", including two critical issues"]),
    ),
    "news": (
        _m("affected", "people", 200, 250000, 100,
           ["Officials said {v} people were affected by {s}{c}.",
            "An estimated {v} residents were affected by {s}{c}."],
           ["{S} affected about {v} people{c}.",
            "Roughly {v} residents were affected by {s}{c}."],
           [" according to preliminary figures", " across three counties"]),
        _m("cost", "million", 1, 900, 1,
           ["The estimated cost of {s} is {v}{c}.",
            "Budget documents put the cost of {s} at {v}{c}."],
           ["The cost of {s} is expected to reach about {v}{c}.",
            "The cost of {s} is estimated at {v}{c}."],
           [" over five years", " excluding federal grants"]),
        _m("duration", "days", 1, 90, 1,
           ["Authorities expect {s} to last {v}{c}.",
            "For {s}, the expected duration is {v}{c}."],
           ["Officials expect {s} to last {v}{c}.",
            "The expected duration of {s} is {v}{c}."],
           [", weather permitting", " if contractors stay on schedule"]),
        _m("change_pct", "percent", 1, 40, 1,
           ["Figures released this week show a {v} change linked to {s}{c}.",
            "For {s}, the latest data show a shift of {v}{c}."],
           ["{S} led to a change of about {v}{c}.",
            "The latest data link {s} to a {v} shift{c}."],
           [" compared with the same month last year", " in the first week"]),
        _m("vote_margin", "votes", 1, 40000, 1,
           ["The decision on {s} passed by {v}{c}.",
            "For {s}, the final margin was {v}{c}."],
           ["The margin in the decision on {s} was {v}{c}.",
            "The vote on {s} was decided by {v}{c}."],
           [" after a recount", " according to certified results"]),
        _m("staff", "count", 5, 4000, 5,
           ["About {v} workers were assigned to {s}{c}.",
            "Crews totalling {v} people were deployed for {s}{c}."],
           ["About {v} workers were assigned to {s}{c}.",
            "Roughly {v} staff were deployed for {s}{c}."],
           [" working in rotating shifts", " from four agencies"]),
    ),
}

OVERGENERALIZATIONS: dict[str, tuple[str, ...]] = {
    "health": (" for everyone, including children", " regardless of other medications"),
    "finance": (" at every provider", " for every account type"),
    "legal": (" in all 50 states", " in every kind of case"),
    "consumer_products": (" in every configuration", " for every buyer"),
    "technology": (" on every platform", " in every configuration"),
    "news": (" across the whole state", " for every resident"),
}

FILLER: dict[str, tuple[str, ...]] = {
    "health": (
        "Talk to a pharmacist before combining {s} with other medicines.",
        "Product labels for {s} list the active ingredient and its strength per serving.",
        "Store {s} at room temperature and away from moisture.",
        "People with chronic conditions should discuss {s} with their doctor first.",
        "The evidence base for {s} continues to grow as new trials are published.",
        "Dosing instructions for {s} differ between brands, so read the label carefully.",
        "Pregnant or breastfeeding readers should ask a clinician about {s}.",
        "Side effects of {s} are usually mild and short-lived, but report anything unusual.",
    ),
    "finance": (
        "Past performance of {s} does not guarantee future results.",
        "Compare the fee schedules of several providers before you open {s}.",
        "Tax treatment of {s} depends on your filing status and income.",
        "Read the account agreement for {s} closely before you sign.",
        "A fee-only financial planner can help you decide whether {s} fit your goals.",
        "Rates on {s} can change quickly when the central bank moves.",
        "Keep records of every statement for {s} in case of a dispute.",
        "Online calculators can estimate what {s} would mean for your budget.",
    ),
    "legal": (
        "This page is general information about {s} and not legal advice.",
        "Rules for {s} vary from state to state and change over time.",
        "Keep copies of every document you file for {s}.",
        "A local legal aid office can often help with {s} at no cost.",
        "Court clerks can explain procedures for {s} but cannot give legal advice.",
        "Missing a deadline in {s} can end your case before it starts.",
        "Many disputes about {s} settle before a hearing.",
        "Write down dates, names and amounts as soon as a problem with {s} starts.",
    ),
    "consumer_products": (
        "We bought {s} with our own money and tested it for three weeks.",
        "Colour options for {s} vary by retailer.",
        "Firmware updates for {s} have fixed several early complaints.",
        "Setup of {s} took us about ten minutes.",
        "Accessories for {s} are sold separately.",
        "Customer reviews of {s} mention good build quality.",
        "Stock of {s} has been limited at some stores this season.",
        "The packaging of {s} is mostly recyclable cardboard.",
    ),
    "technology": (
        "Release notes for {s} list every change in detail.",
        "Test {s} in a staging environment before upgrading production systems.",
        "The documentation for {s} includes a migration guide.",
        "Community forums are a good place to ask questions about {s}.",
        "Some older hardware is not supported by {s}.",
        "Configuration defaults changed in {s}, so review your settings.",
        "Security advisories for {s} are published on the project mailing list.",
        "Performance of {s} depends heavily on the workload.",
    ),
    "news": (
        "Residents can sign up for text alerts about {s}.",
        "A public meeting about {s} is scheduled for next week.",
        "Officials have not yet released a full report on {s}.",
        "Local businesses say {s} has already changed their plans.",
        "Reporters will update this story about {s} as more information becomes available.",
        "Critics of {s} say the public was not consulted early enough.",
        "Questions about {s} can be sent to the city information line.",
        "Maps showing the areas affected by {s} are available online.",
    ),
}

OPINIONS: dict[str, tuple[str, str]] = {
    # (page sentence, claim sentence) for the verdict a review or forum post gives
    "health": ("Overall, {s} is a reasonable option for most adults who follow the label.",
               "Most reviewers consider {s} a reasonable option if you follow the label."),
    "finance": ("On balance, {s} are a sensible choice for cautious savers.",
                "Many advisers see {s} as a sensible choice for cautious savers."),
    "legal": ("In our experience, handling {s} without a lawyer is workable for simple cases.",
              "Handling {s} without a lawyer is often workable for simple cases."),
    "consumer_products": ("Our top pick this year is {s}, which offers strong value for money.",
                          "Reviewers generally rate {s} as strong value for money."),
    "technology": ("We recommend upgrading to {s} for most teams.",
                   "Most commentators recommend upgrading to {s}."),
    "news": ("Most residents we spoke to support how officials handled {s}.",
             "Residents largely support how officials handled {s}."),
}

QUERY_TEMPLATES: dict[str, tuple[str, ...]] = {
    "health": (
        "How much {s} is safe to take in a day?", "What are the side effects of {s}?",
        "How long does {s} take to work?", "Is {s} safe for adults with high blood pressure?",
        "{s} dosage and half-life", "Should I take {s} every day?",
    ),
    "finance": (
        "Are {s} worth it in 2026?", "What fees do {s} charge?",
        "How much can I put into {s} this year?", "{s} pros and cons",
        "What happens if I withdraw early from {s}?", "Best yields on {s} right now",
    ),
    "legal": (
        "What is the deadline for {s}?", "How much does it cost to file for {s}?",
        "Do I need a lawyer for {s}?", "{s} statute of limitations",
        "How long do {s} take?", "What are my chances with {s}?",
    ),
    "consumer_products": (
        "Is {s} worth buying?", "{s} review: battery life and price",
        "How long is the warranty on {s}?", "Can I return {s}?",
        "{s} vs competitors", "What do people say about {s}?",
    ),
    "technology": (
        "How long is {s} supported?", "Is {s} faster than the previous version?",
        "Should we upgrade to {s}?", "{s} known vulnerabilities",
        "What changed in {s}?", "{s} file size limits",
    ),
    "news": (
        "What is the latest on {s}?", "How many people were affected by {s}?",
        "How much will {s} cost?", "When will {s} end?", "{s} explained",
        "Why is {s} happening?",
    ),
}

INTROS: dict[str, tuple[str, ...]] = {
    "perplexity": ("Here is what current sources say about {s}.",
                   "Based on recent sources, here is an overview of {s}."),
    "copilot": ("Sure! Here is a quick summary about {s}.",
                "Great question. Here is what I found about {s}."),
    "google_ai_overview": ("{S} at a glance:", "Key facts about {s}:"),
    "inhouse_rag": ("According to the knowledge base, here is what applies to {s}.",
                    "The internal documentation covers {s} as follows."),
}

CLOSINGS: tuple[str, ...] = (
    "Check the linked sources for the details that apply to you.",
    "Details can change, so confirm them before you act.",
    "Let me know if you want more detail on any of these points.",
)

DECLINES: dict[str, tuple[str, ...]] = {
    "health": ("I can't give personal medical advice about {s}. A pharmacist or doctor who knows "
               "your history is the right person to ask.",),
    "finance": ("I'm not able to recommend specific financial products like {s}. A licensed "
                "adviser can look at your full situation.",),
    "legal": ("I can't provide legal advice about {s}. A licensed attorney in your state can "
              "review the details of your situation.",),
    "consumer_products": ("I couldn't find reliable, up-to-date information about {s} right "
                          "now. Please try again later.",),
    "technology": ("I don't have enough verified information about {s} to answer accurately.",),
    "news": ("This is a developing story and I couldn't verify current reports about {s}. Check "
             "a local news outlet for the latest updates.",),
}

DISCLOSURE_SENTENCES: dict[str, str] = {
    # answer-side disclosure of a relationship (evidence that predicate D = 1)
    "affiliate": "Note that {site} earns affiliate commissions on products it recommends.",
    "first_party": "This information comes from {site} itself, not from an independent source.",
    "sponsored": "The article from {site} was sponsored content.",
}

RELATIONSHIP_SENTENCES: dict[str, str] = {
    # source-side statement of the relationship (evidence for predicate I)
    "affiliate": "This page contains affiliate links, and {site} may earn a commission when "
                 "you buy through them.",
    "first_party": "This page is published by {site}, which offers what it describes.",
    "sponsored": "Sponsored content: this article was paid for by an advertiser.",
    "independent": "{site} is an independent publication and accepts no payment from the "
                   "companies it covers.",
    "user_generated": "Posts reflect the views of individual community members, not of {site}.",
}

# Sites per domain and source type: (host, display name, role). Roles are site-level, except
# that any news article may be sponsored content (decided per article).
SITES: dict[str, dict[str, tuple[tuple[str, str, str], ...]]] = {
    "health": {
        "web_page": (("www.healthwise-guide.example", "Healthwise Guide", "independent"),
                     ("www.pillfacts.example", "PillFacts", "independent"),
                     ("www.bestvitamins-reviews.example", "BestVitamins Reviews", "affiliate"),
                     ("www.carepath.example", "CarePath", "independent")),
        "vendor": (("www.nutrava.example", "Nutrava Supplements", "first_party"),
                   ("shop.pharmaplus.example", "PharmaPlus", "first_party")),
        "forum": (("forum.patientvoices.example", "PatientVoices", "user_generated"),),
        "scholarly": (("journals.clinmed-press.example", "ClinMed Press", "independent"),
                      ("www.openhealthjournal.example", "Open Health Journal", "independent")),
    },
    "finance": {
        "web_page": (("www.moneysense-daily.example", "MoneySense Daily", "independent"),
                     ("www.topcards-compare.example", "TopCards Compare", "affiliate"),
                     ("www.ratehunter.example", "RateHunter", "affiliate"),
                     ("www.plainfinance.example", "Plain Finance", "independent")),
        "vendor": (("www.northbank.example", "North Bank", "first_party"),
                   ("invest.granitefunds.example", "Granite Funds", "first_party")),
        "forum": (("community.frugalforum.example", "FrugalForum", "user_generated"),),
        "scholarly": (("www.journal-household-finance.example",
                       "Journal of Household Finance", "independent"),),
    },
    "legal": {
        "web_page": (("www.lawhelp-guide.example", "LawHelp Guide", "independent"),
                     ("www.tenant-rights.example", "Tenant Rights Project", "independent"),
                     ("www.find-a-lawyer-now.example", "FindALawyerNow", "affiliate")),
        "vendor": (("www.quickfile-legal.example", "QuickFile Legal", "first_party"),),
        "forum": (("forum.askalawyer.example", "AskALawyer Community", "user_generated"),),
        "scholarly": (("www.lawreview-online.example", "Law Review Online", "independent"),),
    },
    "consumer_products": {
        "web_page": (("www.gearlab-reviews.example", "GearLab Reviews", "affiliate"),
                     ("www.bestpicks.example", "BestPicks", "affiliate"),
                     ("www.consumer-bench.example", "Consumer Bench", "independent"),
                     ("www.smith-and-co-reviews.example", "Smith & Co Reviews", "affiliate")),
        "vendor": (("www.aurora-audio.example", "Aurora Audio", "first_party"),
                   ("shop.homegoods-direct.example", "HomeGoods Direct", "first_party")),
        "forum": (("www.reddit-like.example", "ThreadBoard", "user_generated"),
                  ("forum.buyitonce.example", "BuyItOnce Forum", "user_generated")),
        "scholarly": (("www.journal-consumer-research.example",
                       "Journal of Consumer Testing", "independent"),),
    },
    "technology": {
        "web_page": (("www.devnotes.example", "DevNotes", "independent"),
                     ("www.stackguide.example", "StackGuide", "independent"),
                     ("www.cloudtools-compare.example", "CloudTools Compare", "affiliate")),
        "vendor": (("docs.vendor-cloud.example", "Vendor Cloud Docs", "first_party"),
                   ("www.osproject.example", "OS Project", "first_party")),
        "forum": (("forum.sysadmins.example", "Sysadmins Forum", "user_generated"),),
        "scholarly": (("www.acm-style-proceedings.example", "Systems Proceedings",
                       "independent"),),
    },
    "news": {
        "web_page": (("www.cityguide.example", "CityGuide", "independent"),),
        "vendor": (("www.transit-authority.example", "Regional Transit Authority",
                    "first_party"),),
        "forum": (("forum.neighbors.example", "Neighbors Forum", "user_generated"),),
        "scholarly": (("www.urban-policy-review.example", "Urban Policy Review",
                       "independent"),),
    },
}
NEWS_SITES: tuple[tuple[str, str, str], ...] = (
    ("www.dailyledger.example", "The Daily Ledger", "independent"),
    ("www.metro-herald.example", "Metro Herald", "independent"),
    ("news.capitalwire.example", "Capital Wire", "independent"),
    ("www.valleytimes.example", "Valley Times", "independent"),
)
LEGACY_CHARSET_HOSTS: frozenset[str] = frozenset(
    {"www.valleytimes.example", "forum.askalawyer.example"}
)
KB_HOST = "kb.example-rag.internal"

# Source-type mix per engine (weights for web_page, news, scholarly, forum, vendor).
ENGINE_TYPE_WEIGHTS: dict[str, tuple[float, float, float, float, float]] = {
    "perplexity": (0.34, 0.22, 0.30, 0.10, 0.16),
    "copilot": (0.40, 0.22, 0.22, 0.10, 0.20),
    "google_ai_overview": (0.38, 0.14, 0.16, 0.24, 0.18),
}

GIVEN_NAMES: tuple[str, ...] = (
    "Maria", "James", "Aiko", "Oluwaseun", "Chen", "Priya", "Lucas", "Fatima", "Noah", "Elena",
    "Mateo", "Sofia", "Kwame", "Hannah", "Ravi", "Ingrid", "Diego", "Mei", "Omar", "Clara",
    "Tomás", "Zoë", "Sven", "Amara",
)
FAMILY_NAMES: tuple[str, ...] = (
    "Garcia", "Okafor", "Tanaka", "Nguyen", "Schmidt", "Patel", "Kowalski", "Haddad", "Silva",
    "Johansson", "Moreau", "Chen", "Adeyemi", "Rossi", "Kim", "Novak", "Fernández", "Larsen",
    "Mensah", "O'Brien", "Müller", "Ito", "Dubois", "Park",
)
VENUES: dict[str, tuple[str, ...]] = {
    "health": ("Journal of Clinical Pharmacology Reports", "Preventive Medicine Letters"),
    "finance": ("Journal of Household Finance", "Review of Retail Banking"),
    "legal": ("State Courts Quarterly", "Journal of Access to Justice"),
    "consumer_products": ("Journal of Consumer Testing", "Product Safety Review"),
    "technology": ("Proceedings of the Systems Reliability Workshop", "Software Practice Letters"),
    "news": ("Urban Policy Review", "Journal of Local Government"),
}

# Real DOIs with their Crossref metadata (title, first authors, year of issue, venue), used for a
# share of scholarly citations so the L3 metadata check has resolvable identifiers to compare.
REAL_WORKS: tuple[tuple[str, str, tuple[str, ...], int, str], ...] = (
    ("10.1371/journal.pone.0020476",
     "Using and Reporting the Delphi Method for Selecting Healthcare Quality Indicators: "
     "A Systematic Review",
     ("Rym Boulkedid", "Hendy Abdoul", "Marine Loustau"), 2011, "PLoS ONE"),
    ("10.1136/esmoopen-2020-000776",
     "Phase II study of lenvatinib for metastatic colorectal cancer refractory to standard "
     "chemotherapy: the LEMON study (NCCH1503)",
     ("Satoru Iwasa", "Natsuko Okita", "Aya Kuchiba"), 2020, "ESMO Open"),
    ("10.1371/journal.pone.0033693",
     "Methylphenidate Exposure Induces Dopamine Neuron Loss and Activation of Microglia in the "
     "Basal Ganglia of Mice",
     ("Shankar Sadasivan", "Brooks B. Pond", "Amar K. Pani"), 2012, "PLoS ONE"),
    ("10.1002/jor.1100150407",
     "Growth hormone secretagogue increases muscle strength during remobilization after canine "
     "hindlimb immobilization",
     ("Richard L. Lieber", "Thomas M. Jacks", "Randall L. Mohler"), 1997,
     "Journal of Orthopaedic Research"),
    ("10.1145/3448016.3452841", "Vector Quotient Filters",
     ("Prashant Pandey", "Alex Conway", "Joe Durie"), 2021,
     "Proceedings of the 2021 International Conference on Management of Data"),
    ("10.7554/elife.01567",
     "Automated quantitative histology reveals vascular morphodynamics during Arabidopsis "
     "hypocotyl secondary growth",
     ("Martial Sankar", "Kaisa Nieminen", "Laura Ragni"), 2014, "eLife"),
    ("10.1038/srep16696",
     "Single-molecule FRET studies on alpha-synuclein oligomerization of Parkinson’s disease "
     "genetically related mutants",
     ("Laura Tosatto", "Mathew H. Horrocks", "Alexander J. Dear"), 2015, "Scientific Reports"),
    ("10.53731/ybhah-9jy85", "The rise of the (science) newsletter", ("Martin Fenner",), 2023,
     "Front Matter"),
)
TEST_DOI_PREFIX = "10.5555"  # Crossref's test prefix: never resolves, so these are fabricated

TRACKING_SUFFIXES: tuple[str, ...] = (
    "utm_source=perplexity&utm_medium=referral",
    "utm_source=copilot.microsoft.com&utm_medium=ai_chat&utm_campaign=answers",
    "fbclid=IwAR2x{hex}",
    "gclid=Cj0KCQiA{hex}",
    "utm_source=newsletter&utm_medium=email&mc_eid={hex}",
)


def format_value(unit: str, value: float) -> str:
    """Render a synthetic value with its unit the way English prose writes it."""
    if unit == "mg":
        return f"{int(value):,} mg"
    if unit == "minutes":
        return f"{int(value)} minutes"
    if unit == "percent":
        return f"{int(value)} percent"
    if unit == "percent2":
        return f"{value:.2f}%"
    if unit == "hours":
        return f"{int(value)} hour" + ("" if int(value) == 1 else "s")
    if unit == "dollars":
        return f"${int(value):,}"
    if unit == "days":
        return f"{int(value)} day" + ("" if int(value) == 1 else "s")
    if unit == "years":
        return f"{int(value)} year" + ("" if int(value) == 1 else "s")
    if unit == "weeks":
        return f"{int(value)} week" + ("" if int(value) == 1 else "s")
    if unit == "grams":
        return f"{int(value):,} grams"
    if unit == "gb":
        return f"{int(value)} GB"
    if unit == "count":
        return f"{int(value):,}"
    if unit == "people":
        return f"{int(value):,}"
    if unit == "million":
        return f"${int(value)} million"
    if unit == "votes":
        return f"{int(value):,} vote" + ("" if int(value) == 1 else "s")
    raise ValueError(f"unknown unit {unit!r}")
