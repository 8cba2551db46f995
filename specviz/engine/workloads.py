"""The project's one workload set: named prompts tagged copy-heavy or novel.

Copy-heavy prompts carry most of their answer in the context (lookup's home ground); novel ones
ask for text that is not there. The app's presets, the bench, the tests and the trained-proposer
evaluation all read this list.
"""
from __future__ import annotations

from dataclasses import dataclass

COPY, NOVEL = "copy-heavy", "novel"
GROUNDED = "grounded, not copyable"  # the answer is built from the input but shares few token runs with it


@dataclass(frozen=True)
class Workload:
    name: str
    kind: str      # COPY or NOVEL
    task: str      # what the prompt asks for, in a few words
    prompt: str
    chat: bool = True  # wrap in the model's chat template


_PASSAGE = """The harbour town of Velmora sits at the mouth of a slow green river. Every spring the \
fishing fleet is repainted in bright colours, and the whole town gathers on the quay to vote for \
the best boat. The old lighthouse keeper, Marta Quill, has kept a logbook of the weather for forty \
years. Her records show that the spring storms now arrive two weeks later than they did when she \
started. The town council uses her logbook to decide when the fleet may sail, and the fishermen \
trust her notes more than any forecast on the radio. Last year a young engineer named Tomas Reyes \
installed solar panels on the lighthouse roof, so the lamp no longer depends on diesel from the \
mainland."""

_CODE = '''def total_price(items, tax_rate):
    """Return the price of all items including tax."""
    subtotal = 0
    for item in items:
        subtotal += item["price"] * item["quantity"]
    tax = subtotal * tax_rate
    return subtotal + tax


def cheapest_item(items):
    """Return the item with the lowest unit price."""
    best = None
    for item in items:
        if best is None or item["price"] < best["price"]:
            best = item
    return best
'''

_DOC = """Library opening hours and rules.
The main reading room is open from 9 am to 8 pm on weekdays and from 10 am to 4 pm on Saturdays. \
It is closed on Sundays and public holidays. Members may borrow up to six books at a time for three \
weeks. A loan can be renewed twice online unless another member has reserved the book. Late returns \
cost 20 cents per book per day, up to a maximum of 5 euros per book. Laptops may be used in the \
reading room, but phone calls must be taken in the entrance hall. Food is not allowed anywhere in \
the library; water in a closed bottle is allowed."""

_CSV = """name,city,age,role
Alice Martin,Lyon,34,engineer
Bruno Costa,Porto,41,designer
Chen Wei,Shanghai,29,analyst
Dana Novak,Prague,52,manager
Elif Kaya,Izmir,38,teacher"""

WORKLOADS: list[Workload] = [
    Workload("summarise-passage", COPY, "summarise a passage, keeping its names",
             f"Here is a passage:\n\n{_PASSAGE}\n\nRewrite the passage above sentence by sentence, "
             "changing the name Marta Quill to Elena Stone and keeping everything else the same."),
    Workload("edit-code", COPY, "edit code that must be echoed back",
             f"```python\n{_CODE}```\n\nRename the function `cheapest_item` to `lowest_price_item`. "
             "Show the full code."),
    Workload("quote-document", COPY, "answer from a quoted document",
             f"Read this document:\n\n{_DOC}\n\nCopy the sentences of the document that say when the "
             "reading room is open, how many books a member may borrow and what late returns cost. "
             "Quote them exactly."),
    Workload("csv-to-json", COPY, "reformat structured data",
             f"Convert this CSV to a JSON list of objects, one object per row, with the keys name, "
             f"city, age and role:\n\n{_CSV}"),
    Workload("story", NOVEL, "an open-ended story",
             "Write a short story about a robot who learns to bake bread in a small mountain village."),
    Workload("brainstorm", NOVEL, "a brainstorm list",
             "Give me ten creative names for a bakery that also sells books, each with a one-line reason."),
    Workload("chat", NOVEL, "a short chat",
             "Hi! I just moved to a new city and I feel a bit lonely. Any advice?"),
    Workload("explain", NOVEL, "an explanation",
             "Explain to a ten-year-old why the sky is blue and why sunsets are red."),
]

# A translation-like task (Spec-Bench's "translation" category): input-grounded, yet the output's token runs
# are not in the context, so lookup finds little to copy. Kept out of WORKLOADS (the bench's and Compare's set)
# so their plans do not change; the lesson pages and the CLI reach it through ALL / BY_NAME.
TRANSLATE = Workload("translate", GROUNDED, "translate a passage into French",
                     f"Translate this passage into French:\n\n{_DOC}")
ALL: list[Workload] = WORKLOADS + [TRANSLATE]

# -- held-out copy-heavy prompts (issue 35 §4) -----------------------------------------------------------------
# Copying of other shapes than the bench's four, to check that the copying rules' settings were not fitted to
# those four: scripts/copy_bound.py --held-out replays the rules on them (data/copy_texts/ caches the model's
# texts). Kept out of WORKLOADS and ALL, so the bench's plan, Compare's presets and the tests that run every
# workload do not grow.
_LETTER = """Dear members of the allotment society,
The spring meeting will take place on Thursday the 14th of March at seven in the evening, in the hall behind \
the bakery on Mill Lane. We will vote on the new water tariff, which the committee proposes to raise from \
12 to 15 euros per plot per season. Plots that have not been dug by the end of April will be offered to the \
people on the waiting list. Please bring your own cup, since the hall no longer lends them.
With kind regards,
Ruth Adebayo, secretary"""

_CONFIG_JSON = """{
  "server": {"host": "0.0.0.0", "port": 8080, "workers": 4},
  "database": {"url": "postgres://db.internal:5432/shop", "pool_size": 10, "timeout_s": 30},
  "logging": {"level": "info", "file": "/var/log/shop/app.log", "rotate_days": 7},
  "features": {"new_checkout": true, "gift_cards": false, "beta_banner": true}
}"""

_INVENTORY = '''class Inventory:
    def __init__(self):
        self.stock = {}

    def add(self, sku, count):
        self.stock[sku] = self.stock.get(sku, 0) + count

    def remove(self, sku, count):
        if self.stock.get(sku, 0) < count:
            raise ValueError(f"not enough {sku} in stock")
        self.stock[sku] -= count

    def count(self, sku):
        return self.stock.get(sku, 0)
'''

_NOTICES = ["""Notice A (swimming pool): The pool opens at 6.30 am on weekdays and at 8 am at weekends. \
Lanes 1 and 2 are reserved for lessons until 10 am. Swimming caps are required for everyone.""",
            """Notice B (gym): The gym is open from 7 am to 10 pm every day. Members under sixteen may \
train only with an adult. Towels must be placed on every bench before use.""",
            """Notice C (sauna): The sauna is heated from 2 pm to 9 pm, Tuesday to Sunday. It is closed \
on Mondays for cleaning. Drinking water is provided at the entrance."""]

_STATIONS = "\n".join(["station,region,elevation_m,rain_mm", "Aldergrove,North,63,1021", "Bexley Hill,South,121,688",
                       "Carran Moor,West,402,1540", "Dunmore,North,88,975", "Eastwick,East,12,590",
                       "Fenwick,East,9,604", "Glenrath,West,215,1310", "Harlow Ford,South,57,640",
                       "Inchmore,North,140,1102", "Juniper Bay,West,5,1188", "Kestle,South,73,702",
                       "Lowfield,East,20,575", "Marrow Pass,West,530,1702", "Northam,North,31,880",
                       "Oakby,South,96,655"])

_TYPOS = """Our cycling club meets every Sunday at nine oclock outside the town library. The route is usualy \
forty kilometres long and follows the river to the old stone brigde before turning back through the woods. \
New riders are welcome, but they should bring a helmet, a spare inner tube and enough water for the hole ride. \
If it rains heavily the ride is cancelled and a mesage is posted on the club's page by eight."""

_SQL = """CREATE TABLE bookings (id INTEGER PRIMARY KEY, guest TEXT, room INTEGER, nights INTEGER);
SELECT guest, room FROM bookings WHERE nights > 3;
SELECT room, COUNT(*) FROM bookings GROUP BY room;
UPDATE bookings SET room = 12 WHERE guest = 'Okafor';
DELETE FROM bookings WHERE nights = 0;"""

HELD_OUT_COPY: list[Workload] = [
    Workload("quote-with-edits", COPY, "quote a letter back with a few edits",
             f"Here is a letter:\n\n{_LETTER}\n\nWrite the letter out again with two changes: the meeting is "
             "now on Friday the 15th of March, and the tariff rises to 14 euros instead of 15. Keep every other "
             "word as it is."),
    Workload("json-to-yaml", COPY, "convert a JSON config to YAML",
             f"Convert this JSON configuration file to YAML, keeping every key and value:\n\n{_CONFIG_JSON}"),
    Workload("rename-throughout", COPY, "a refactor that renames one identifier everywhere",
             f"```python\n{_INVENTORY}```\n\nRename the attribute `stock` to `levels` everywhere in this class "
             "and show the whole class."),
    Workload("questions-over-documents", COPY, "questions answered by quoting several documents",
             "Read these three notices:\n\n" + "\n\n".join(_NOTICES) + "\n\nAnswer the questions below by "
             "quoting the sentence that answers each one, and say which notice it comes from.\n1. When does the "
             "pool open on weekdays?\n2. Who may train in the gym alone?\n3. Why is the sauna closed on Mondays?"),
    Workload("long-table", COPY, "reformat a 15-row table",
             f"Turn this CSV into a Markdown table with the same columns and rows in the same order:\n\n{_STATIONS}"),
    Workload("fix-typos", COPY, "correct the spelling of a paragraph",
             "Correct the spelling mistakes in this paragraph and write out the whole corrected paragraph:\n\n"
             + _TYPOS),
    Workload("sql-rename-column", COPY, "rename a column in every SQL statement",
             f"Rename the column `room` to `room_number` in every statement below and show all of them:\n\n{_SQL}"),
]

BY_NAME = {w.name: w for w in ALL}


def of_kind(kind: str) -> list[Workload]:
    return [w for w in ALL if w.kind == kind]


def get(name: str) -> Workload:
    if name not in BY_NAME:
        raise KeyError(f"unknown workload '{name}' (known: {', '.join(BY_NAME)})")
    return BY_NAME[name]


# -- sessions: several requests that revisit the same material (issue 23 §3) ---------------------------------
# Agents and coding assistants send request after request about the same code, table or document, each
# restating it. Within one request lookup and suffix copy from the prompt; across requests only a cache
# of earlier requests (suffix decoding's) can copy what the model itself wrote last time.
SESSION = "session"


@dataclass(frozen=True)
class Session:
    name: str
    kind: str                          # SESSION
    task: str                          # what the session does, in a few words
    requests: tuple[Workload, ...]     # sent in this order, each a whole request (its own prompt)


_FN = ['''def average(values):
    total = 0
    for v in values:
        total += v
    return total / len(values)
''', '''def average(values):
    """Return the mean of values."""
    total = 0
    for v in values:
        total += v
    return total / len(values)
''', '''def average(values):
    """Return the mean of values."""
    if not values:
        return 0.0
    total = 0
    for v in values:
        total += v
    return total / len(values)
''', '''def average(values: list[float]) -> float:
    """Return the mean of values."""
    if not values:
        return 0.0
    total = 0
    for v in values:
        total += v
    return total / len(values)
''', '''def average(values: list[float]) -> float:
    """Return the mean of values (0.0 for an empty list)."""
    if not values:
        return 0.0
    return sum(values) / len(values)
''']
_FN_ASKS = ["Add a docstring saying what the function returns.",
            "Make it return 0.0 when the list is empty.",
            "Add type hints: a list of floats in, a float out.",
            "Replace the loop with the built-in sum().",
            "Rename the function to mean_value."]

_TABLE_ASKS = ["Convert this CSV to a Markdown table.",
               "Convert this CSV to a JSON list of objects with the keys name, city, age and role.",
               "Rewrite this CSV with the rows sorted by age, youngest first. Keep the header.",
               "Convert this CSV to YAML: a list with one entry per person."]

_DOC_ASKS = ["When is the main reading room open? Quote the sentence.",
             "How many books may a member borrow, and for how long? Quote the sentence.",
             "What do late returns cost? Quote the sentence.",
             "Is food allowed in the library? Quote the sentence."]

# An agent's tool calls: the same JSON record filled from a new message each time. The prompt names the keys
# but never shows a filled record, so within one request there is little to copy; the record's layout, which
# the model writes the same way every time, is in the earlier requests' outputs, and only a cache holds it.
_ORDER_ASK = ("Write this order as one JSON object with the keys customer, city, items (a list of objects with "
              "name, quantity and unit_price), currency and total. Reply with the JSON only.\n\nOrder: ")
_ORDERS = ["Maria Lopez in Porto ordered 2 notebooks at 3.50 euros each and 1 pen at 1.20 euros.",
           "Tom Becker in Bonn ordered 3 folders at 2.10 euros each and 2 markers at 0.90 euros each.",
           "Aiko Tanaka in Lyon ordered 1 stapler at 6.40 euros and 4 pencils at 0.50 euros each.",
           "Sam Okafor in Cork ordered 5 envelopes at 0.30 euros each and 1 ruler at 1.80 euros.",
           "Lena Novak in Brno ordered 2 calendars at 7.00 euros each and 3 erasers at 0.40 euros each."]

SESSIONS: list[Session] = [
    Session("edit-function-session", SESSION, "five successive edits of one function, each restating the code",
            tuple(Workload(f"edit-function-{i + 1}", SESSION, ask,
                           f"```python\n{code}```\n\n{ask} Show the full function.")
                  for i, (code, ask) in enumerate(zip(_FN, _FN_ASKS)))),
    Session("reformat-table-session", SESSION, "one table reformatted four ways",
            tuple(Workload(f"reformat-table-{i + 1}", SESSION, ask, f"{ask}\n\n{_CSV}")
                  for i, ask in enumerate(_TABLE_ASKS))),
    Session("question-document-session", SESSION, "one document questioned four times",
            tuple(Workload(f"question-document-{i + 1}", SESSION, ask, f"Read this document:\n\n{_DOC}\n\n{ask}")
                  for i, ask in enumerate(_DOC_ASKS))),
    Session("order-records-session", SESSION, "five orders written as the same JSON record (an agent's tool calls)",
            tuple(Workload(f"order-record-{i + 1}", SESSION, "write the order as a JSON record", _ORDER_ASK + order)
                  for i, order in enumerate(_ORDERS))),
]
SESSION_BY_NAME = {s.name: s for s in SESSIONS}


def get_session(name: str) -> Session:
    if name not in SESSION_BY_NAME:
        raise KeyError(f"unknown session '{name}' (known: {', '.join(SESSION_BY_NAME)})")
    return SESSION_BY_NAME[name]
