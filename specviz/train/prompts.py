"""A varied, seeded prompt set for self-distillation: copy-heavy tasks and open-ended ones.

The copy material is local human text (docstrings and functions from Python's standard library,
parsed, never imported), short code snippets in several languages written for this file, synthetic
tables and records, and earlier turns of a chat. A prompt is a string (one user turn) or a list of chat
messages (a multi-turn chat: earlier user and assistant turns, then the new request). None of the
project's workload prompts is used (tests/core/test_prompts.py checks it).
"""
from __future__ import annotations

import ast
import json
import os
import random
import sysconfig

COPY, NOVEL = "copy-heavy", "novel"

_STDLIB = ["textwrap", "string", "shutil", "statistics", "calendar", "heapq", "bisect", "fractions",
           "colorsys", "difflib", "glob", "fnmatch", "html/__init__", "csv", "random", "functools",
           "base64", "copy", "dataclasses", "datetime", "decimal", "enum", "filecmp", "gettext",
           "getopt", "gzip", "hashlib", "hmac", "imaplib", "inspect", "ipaddress", "locale", "mimetypes",
           "netrc", "numbers", "operator", "optparse", "pathlib", "pprint", "quopri", "reprlib",
           "sched", "secrets", "selectors", "shlex", "smtplib", "socketserver", "stat", "tabnanny",
           "tempfile", "timeit", "token", "tokenize", "trace", "turtle", "uuid", "wave", "weakref",
           "zipfile", "argparse", "logging/__init__", "json/encoder", "json/decoder", "email/utils",
           "urllib/parse", "http/cookies", "collections/__init__", "ftplib", "poplib", "cmd", "code",
           "codeop", "contextlib", "configparser", "dis", "doctest", "graphlib", "keyword", "linecache",
           "mailbox", "plistlib", "pstats", "queue", "rlcompleter", "runpy", "sndhdr", "symtable",
           "threading", "traceback", "typing", "warnings", "webbrowser", "xdrlib", "zipapp"]

NAMES = ["Ada Brook", "Bilal Haddad", "Chiara Rossi", "Dmitri Orlov", "Eun-ji Park", "Farah Nasser",
         "Gustav Lind", "Hana Sato", "Ivan Petrov", "Jonas Weber", "Kofi Mensah", "Lucia Alves",
         "Maya Cohen", "Nils Berg", "Olga Ivanova", "Pedro Silva", "Quinn Murphy", "Rosa Diaz",
         "Sven Dahl", "Tara Singh", "Umar Farouk", "Vera Novak", "Wen Li", "Yara Haddad", "Zoe Clark"]
CITIES = ["Lisbon", "Oslo", "Nairobi", "Kyoto", "Lima", "Tallinn", "Cork", "Ghent", "Hanoi", "Quito",
          "Perth", "Bergen", "Graz", "Tunis", "Leeds", "Porto", "Seville", "Turku", "Dakar", "Cusco"]
ROLES = ["nurse", "pilot", "baker", "chemist", "teacher", "plumber", "editor", "farmer", "architect",
         "librarian", "courier", "dentist", "actor", "translator", "welder", "accountant"]
THINGS = ["a lighthouse", "a bicycle shop", "a night train", "an old map", "a garden on a roof",
          "a lost cat", "a music box", "a library card", "a chess club", "a snowstorm", "a bakery",
          "a small boat", "a museum at night", "a kite festival", "a radio station", "an orchard",
          "a broken clock", "a mountain hut", "a street market", "a tiny robot"]
PEOPLE = ["a retired sailor", "a shy student", "a curious fox", "an old inventor", "two sisters",
          "a young chef", "a tired detective", "a village doctor", "a painter", "a robot gardener",
          "a beekeeper", "a lonely astronaut", "a bus driver", "a clockmaker", "a teenage coder"]
TOPICS = ["how rainbows form", "why we need sleep", "how vaccines work", "what a black hole is",
          "how bees make honey", "why leaves change colour", "how a refrigerator works",
          "what inflation is", "how the internet sends a message", "why the moon has phases",
          "how plants drink water", "what a computer program is", "why the sea is salty",
          "how airplanes stay in the air", "what electricity is", "how volcanoes erupt",
          "why cats purr", "how recycling works", "what DNA does", "how a bicycle stays upright"]
AUDIENCES = ["a ten-year-old", "a busy manager", "a high-school student", "my grandmother", "a beginner"]
FORMS = ["a short poem", "a haiku", "a limerick", "a short story", "a diary entry", "a letter",
         "a product description", "a news headline and a short article", "a dialogue"]
ASKS = ["I want to start running but I always give up after a week. Any tips?",
        "How can I keep my houseplants alive?", "What should I pack for a three-day hike?",
        "I have an interview tomorrow and I am nervous. What can I do tonight?",
        "How do I make friends at a new job?", "What is a good way to learn a new language?",
        "How can I save money on groceries?", "I can't focus when I study at home. Ideas?",
        "What are some fun things to do on a rainy weekend?", "How do I start journaling?",
        "My code keeps crashing and I don't know why. How should I debug it?",
        "How can I be more productive in the morning?", "What makes a good birthday present?",
        "How do I politely say no to extra work?", "How do I cook rice properly?"]


# -- code in several languages, written for this file ---------------------------------------------
SNIPPETS = {
    "JavaScript": ["""function {f}(items) {{
  let total = 0;
  for (const item of items) {{
    if (item.price > {n}) {{
      total += item.price * item.count;
    }}
  }}
  return total;
}}""", """const {f} = (words) => {{
  const seen = new Map();
  for (const w of words) {{
    seen.set(w, (seen.get(w) || 0) + 1);
  }}
  return [...seen.entries()].sort((a, b) => b[1] - a[1]).slice(0, {n});
}};""", """async function {f}(url) {{
  const response = await fetch(url);
  if (!response.ok) {{
    throw new Error("request failed: " + response.status);
  }}
  const data = await response.json();
  return data.items.filter((x) => x.score >= {n});
}}"""],
    "Go": ["""func {f}(xs []int) int {{
\tbest := xs[0]
\tfor _, x := range xs[1:] {{
\t\tif x > best {{
\t\t\tbest = x
\t\t}}
\t}}
\treturn best + {n}
}}""", """func {f}(path string) ([]string, error) {{
\tdata, err := os.ReadFile(path)
\tif err != nil {{
\t\treturn nil, err
\t}}
\tlines := strings.Split(string(data), "\\n")
\treturn lines[:min({n}, len(lines))], nil
}}"""],
    "Rust": ["""fn {f}(values: &[f64]) -> Option<f64> {{
    if values.is_empty() {{
        return None;
    }}
    let sum: f64 = values.iter().sum();
    Some(sum / values.len() as f64 * {n}.0)
}}""", """fn {f}(text: &str) -> Vec<String> {{
    text.split_whitespace()
        .filter(|w| w.len() > {n})
        .map(|w| w.to_lowercase())
        .collect()
}}"""],
    "C": ["""int {f}(const int *a, int n) {{
    int count = 0;
    for (int i = 0; i < n; i++) {{
        if (a[i] % {n} == 0) {{
            count++;
        }}
    }}
    return count;
}}""", """void {f}(char *s) {{
    int i = 0, j = strlen(s) - 1;
    while (i < j) {{
        char t = s[i];
        s[i++] = s[j];
        s[j--] = t;
    }}
}}"""],
    "SQL": ["""-- {f}: the best customers
SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS spent
FROM orders
WHERE created_at >= '2024-0{n}-01'
GROUP BY customer_id
HAVING COUNT(*) > {n}
ORDER BY spent DESC;""", """CREATE TABLE {f} (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    author TEXT,
    pages INTEGER CHECK (pages > {n}),
    added DATE DEFAULT CURRENT_DATE
);"""],
    "Bash": ["""#!/bin/bash
# {f}: keep the newest {n} backups
dir="$1"
ls -1t "$dir"/*.tar.gz | tail -n +{n1} | while read -r old; do
  echo "removing $old"
  rm -- "$old"
done""", """# {f}: report long text files
for f in *.txt; do
  lines=$(wc -l < "$f")
  if [ "$lines" -gt {n} ]; then
    echo "$f has $lines lines"
  fi
done"""],
    "Java": ["""public static int {f}(String s) {{
    int vowels = 0;
    for (char c : s.toLowerCase().toCharArray()) {{
        if ("aeiou".indexOf(c) >= 0) {{
            vowels++;
        }}
    }}
    return vowels * {n};
}}"""],
    "Ruby": ["""def {f}(people)
  people
    .select {{ |p| p[:age] >= {n} }}
    .map {{ |p| p[:name].upcase }}
    .sort
end"""],
}
FUNC_NAMES = ["process", "countItems", "summarize", "filterRows", "topWords", "largest", "loadLines",
              "average", "cleanup", "countVowels", "reverseText", "adults", "score", "pickBest", "tally"]
CODE_TASKS = ["Add a short comment above every line and reply with the whole code.",
              "Rename the function to `{g}` everywhere and show the full code again.",
              "Rewrite this in {other}, keeping the same logic and names.",
              "Repeat the code exactly, then explain in three sentences what it does.",
              "Is there a bug or an edge case this code misses? Quote the line and fix it.",
              "Reformat the code with consistent indentation and show all of it.",
              "Write two test cases for this code, then repeat the code under them.",
              "List every variable in this code and say what each one holds.",
              "Add error handling to this code and show the complete new version.",
              "Explain this code line by line, quoting each line before its explanation."]

# -- more open-ended material ----------------------------------------------------------------------
INGREDIENTS = ["lentils", "spinach", "rice", "chickpeas", "eggs", "tomatoes", "mushrooms", "potatoes",
               "lemons", "oats", "apples", "carrots", "tofu", "pasta", "onions", "cheese", "beans", "garlic"]
PAIRS = [("trains", "planes"), ("paper books", "e-readers"), ("cats", "dogs"), ("tea", "coffee"),
         ("city life", "village life"), ("running", "swimming"), ("renting", "buying a home"),
         ("working from home", "working in an office"), ("summer", "winter"), ("email", "phone calls")]
STYLES = ["", "", "", "Keep it under {n}0 words.", "Use simple words.", "Make it a little funny.",
          "Answer in {n} sentences.", "Use a numbered list.", "Write it in a warm, friendly tone.",
          "Be brief.", "Add one surprising detail.", "End with a question."]
OPENINGS = ["The door had been locked for {n} years.", "Nobody in {city} had seen snow like it.",
            "The message arrived at {n} in the morning.", "{name} found the key under the stairs.",
            "It was the last bus out of {city}.", "The robot had one job left to do."]
ITEMS = ["a rain jacket", "comfortable shoes", "a water bottle", "a phone charger", "a notebook", "sunscreen",
         "a small umbrella", "snacks", "a map", "a warm sweater", "a book", "a reusable bag", "a torch",
         "a first-aid kit", "headphones", "a hat", "spare socks", "a camera"]
TIPS = ["ask questions early", "write down what you learn each day", "learn your colleagues' names",
        "arrive a few minutes early", "keep a list of open tasks", "ask for feedback after a month",
        "take short breaks", "offer help when you have time", "keep your desk tidy", "say when you are stuck"]
QUESTIONS = ["What does a normal day look like?", "What do you enjoy most about the work?",
             "What was the hardest thing to learn?", "Which tools do you use every day?",
             "How did you start?", "What would you tell a beginner?", "What mistakes are common?",
             "How do you handle a difficult day?", "What has changed in your field?"]
ACTIVITIES = ["visit a museum", "try a new cafe", "read in a library", "go to an indoor market",
              "watch a film", "cook something new", "play a board game", "visit a gallery", "take a cooking class"]
USES = ["roast them", "add them to a soup", "make a salad", "bake them into bread", "blend a smoothie",
        "make a sauce", "pickle them", "grill them", "stir them into a curry", "eat them raw with a dip"]
LIST_ASKS = [("a packing list for a weekend in {city}", ITEMS), ("{n} tips for a first job as a {role}", TIPS),
             ("a shopping list for a dinner with {ing} and {ing2}", INGREDIENTS),
             ("{n} questions to ask a {role}", QUESTIONS), ("a plan for a rainy day in {city}", ACTIVITIES),
             ("{n} ways to use {ing}", USES)]
FOLLOW_COPY = ["Now put that list in a table with a second column saying why each item matters.",
               "Repeat your list, numbered, and add one more item at the end.",
               "Keep your list exactly as it is but sort it alphabetically.",
               "Copy your answer, then bold the most important item.",
               "Turn your list into a short paragraph that keeps every item."]
FOLLOW_NOVEL = ["Thanks! Now write a short poem about {thing}.", "Great. What would you change for a {role}?",
                "Now explain {topic} to {aud}.", "Which one would you choose first, and why?"]


def _stdlib_sources(seed: int) -> tuple[list[str], list[str]]:
    """(documents, functions): module docstrings and short functions from the standard library."""
    root = sysconfig.get_paths()["stdlib"]
    docs, funcs = [], []
    for mod in _STDLIB:
        path = os.path.join(root, mod + ".py")
        try:
            src = open(path, encoding="utf-8").read()
            tree = ast.parse(src)
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        d = ast.get_docstring(tree)
        if d and 250 <= len(d) <= 1600:
            docs.append(d.strip())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                seg = ast.get_source_segment(src, node)
                if seg and 5 <= seg.count("\n") <= 22 and len(seg) < 1100:
                    funcs.append(seg)
            if isinstance(node, ast.ClassDef):
                for sub in node.body:
                    if isinstance(sub, ast.FunctionDef) and ast.get_docstring(sub):
                        ds = ast.get_docstring(sub)
                        if 250 <= len(ds) <= 1400:
                            docs.append(ds.strip())
    random.Random(seed).shuffle(docs)
    random.Random(seed + 1).shuffle(funcs)
    return docs, funcs


def _csv(r: random.Random) -> str:
    rows = ["name,city,age,role"]
    for n in r.sample(NAMES, r.randint(3, 6)):
        rows.append(f"{n},{r.choice(CITIES)},{r.randint(19, 70)},{r.choice(ROLES)}")
    return "\n".join(rows)


def _copy_prompt(r: random.Random, docs: list[str], funcs: list[str]) -> str:
    kind = r.randrange(6)
    if kind == 0 and docs:
        d = r.choice(docs)
        return (f"Here is a passage:\n\n{d}\n\nRewrite the passage above sentence by sentence, keeping "
                "everything the same but making it a little simpler.")
    if kind == 1 and funcs:
        f = r.choice(funcs)
        return (f"Here is some Python code:\n\n{f}\n\nRewrite the whole function with a short comment "
                "above each line. Reply with the full code only.")
    if kind == 2 and docs:
        d = r.choice(docs)
        return f"Read this text:\n\n{d}\n\nQuote the two most important sentences of the text exactly."
    if kind == 3:
        return (f"Convert this CSV to a JSON list of objects, one object per row:\n\n{_csv(r)}")
    if kind == 4 and docs:
        d = r.choice(docs)
        return (f"Summarise the following text in {r.choice(['two', 'three', 'four', 'five'])} bullet points "
                f"for {r.choice(AUDIENCES)}, reusing its wording:\n\n{d}")
    if funcs:
        f = r.choice(funcs)
        return f"Here is a function:\n\n{f}\n\nRepeat the code exactly and then explain what it does."
    return f"Copy this table and add a column 'country':\n\n{_csv(r)}"


def _novel_prompt(r: random.Random) -> str:
    kind = r.randrange(7)
    if kind == 0:
        return f"Write {r.choice(FORMS)} about {r.choice(PEOPLE)} and {r.choice(THINGS)}."
    if kind == 1:
        return f"Explain {r.choice(TOPICS)} to {r.choice(AUDIENCES)}."
    if kind == 2:
        ask = r.choice(ASKS)
        return ask if r.random() < 0.3 else f"I am a {r.choice(ROLES)} in {r.choice(CITIES)}. {ask}"
    if kind == 3:
        n = r.randint(3, 8)
        return f"Give me {n} ideas for names of {r.choice(THINGS)[2:].strip()}, each with a short reason."
    if kind == 4:
        return (f"Write a short email from a {r.choice(ROLES)} in {r.choice(CITIES)} to a colleague "
                f"about {r.choice(THINGS)}.")
    if kind == 5:
        return f"What are the pros and cons of living in {r.choice(CITIES)} as a {r.choice(ROLES)}?"
    return f"Describe a day in the life of {r.choice(PEOPLE)} who works as a {r.choice(ROLES)}."


def _fill(template: str, r: random.Random, n: int | None = None) -> str:
    ing = r.sample(INGREDIENTS, 2)
    return template.format(n=r.randint(2, 9) if n is None else n, city=r.choice(CITIES),
                           name=r.choice(NAMES).split()[0],
                           role=r.choice(ROLES), ing=ing[0], ing2=ing[1], thing=r.choice(THINGS),
                           topic=r.choice(TOPICS), aud=r.choice(AUDIENCES))


def _styled(text: str, r: random.Random) -> str:
    """An optional constraint on length, tone or form: the same request asked in many ways."""
    style = _fill(r.choice(STYLES), r)
    return f"{text} {style}" if style else text


def _code_prompt(r: random.Random) -> str:
    lang = r.choice(sorted(SNIPPETS))
    n = r.randint(2, 9)
    code = r.choice(SNIPPETS[lang]).format(f=r.choice(FUNC_NAMES), n=n, n1=n + 1)
    task = r.choice(CODE_TASKS).format(g=r.choice(FUNC_NAMES) + "V2",
                                       other=r.choice([x for x in ["Python", *SNIPPETS] if x != lang]))
    return f"Here is some {lang} code:\n\n{code}\n\n{task}"


def _typos(text: str, r: random.Random) -> str:
    """The text with a few letters swapped inside words (a proofreading task with the answer in view)."""
    words = text.split(" ")
    for i in r.sample(range(len(words)), min(len(words), max(2, len(words) // 25))):
        w = words[i]
        if len(w) > 4 and w.isalpha():
            j = r.randrange(1, len(w) - 2)
            words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]
    return " ".join(words)


def _record(r: random.Random) -> str:
    n = r.choice(NAMES)
    return (f'{{"name": "{n}", "city": "{r.choice(CITIES)}", "role": "{r.choice(ROLES)}", '
            f'"age": {r.randint(19, 70)}, "projects": {r.randint(0, 12)}, "team": '
            f'"{r.choice(["red", "blue", "green", "gold"])}"}}')


def _more_copy(r: random.Random, docs: list[str]) -> str:
    kind = r.randrange(6)
    if kind == 0 and docs:
        return ("Fix the spelling mistakes in this text and reply with the corrected text only:\n\n"
                f"{_typos(r.choice(docs), r)}")
    if kind == 1:
        recs = "\n".join(_record(r) for _ in range(r.randint(2, 4)))
        return f"Convert these JSON records to YAML, keeping every field:\n\n{recs}"
    if kind == 2:
        return f"Sort the rows of this CSV by age, oldest first, and show the whole table:\n\n{_csv(r)}"
    if kind == 3:
        return f"Turn this CSV into a Markdown table:\n\n{_csv(r)}"
    if kind == 4 and docs:
        d = r.choice(docs)
        w = r.choice([x for x in d.split() if x.isalpha() and len(x) > 4] or ["the"])
        return f"In the text below, replace every '{w}' with '{w.upper()}' and change nothing else.\n\n{d}"
    items = r.sample(ITEMS, r.randint(4, 7))
    return "Repeat this list in reverse order, one item per line:\n\n" + "\n".join(items)


def _more_novel(r: random.Random) -> str:
    kind = r.randrange(8)
    if kind == 0:
        ing = ", ".join(r.sample(INGREDIENTS, r.randint(2, 4)))
        return f"Suggest a simple recipe using {ing}."
    if kind == 1:
        a, b = r.choice(PAIRS)
        return f"Compare {a} and {b} for {r.choice(AUDIENCES)}."
    if kind == 2:
        return f"Continue this story, told by {r.choice(PEOPLE)}: \"{_fill(r.choice(OPENINGS), r)}\""
    if kind == 3:
        return f"Plan a {r.randint(1, 5)}-day trip to {r.choice(CITIES)} for {r.choice(PEOPLE)}."
    if kind == 4:
        return f"Write a dialogue between {r.choice(PEOPLE)} and a {r.choice(ROLES)} about {r.choice(THINGS)}."
    if kind == 5:
        return f"List {r.randint(3, 8)} interview questions for a {r.choice(ROLES)} job in {r.choice(CITIES)}."
    if kind == 6:
        return f"Write a short review of {r.choice(THINGS)} in {r.choice(CITIES)}, as {r.choice(PEOPLE)} would."
    return f"Write a slogan and a two-line advert for {r.choice(THINGS)} run by a {r.choice(ROLES)}."


def _chat(r: random.Random) -> tuple[str, list[dict]]:
    """A multi-turn chat: a request, an assistant turn written here, then a follow-up (copy or new)."""
    template, pool = r.choice(LIST_ASKS)
    n = r.randint(3, 6)
    ask = _fill(template, r, n)
    items = r.sample(pool, n)
    reply = "Of course! Here you go:\n" + "\n".join(f"- {x[0].upper() + x[1:]}" for x in items)
    copy = r.random() < 0.6
    follow = r.choice(FOLLOW_COPY) if copy else _fill(r.choice(FOLLOW_NOVEL), r)
    turns = [{"role": "user", "content": f"Can you give me {ask}?"}, {"role": "assistant", "content": reply},
             {"role": "user", "content": follow}]
    return (COPY if copy else NOVEL), turns


def make_prompts(n: int, seed: int = 0, copy_share: float = 0.45, chat_share: float = 0.12
                 ) -> list[tuple[str, str | list[dict]]]:
    """n (kind, prompt) pairs, reproducible from the seed; a prompt is a user message, or (a share
    `chat_share`) a multi-turn chat as a list of messages."""
    r = random.Random(seed)
    docs, funcs = _stdlib_sources(seed)
    out = []
    for _ in range(n):
        if r.random() < chat_share:
            out.append(_chat(r))
        elif r.random() < copy_share:
            pick = r.random()
            text = (_copy_prompt(r, docs, funcs) if pick < 0.4 else _code_prompt(r) if pick < 0.7
                    else _more_copy(r, docs))
            out.append((COPY, text))
        else:
            text = _novel_prompt(r) if r.random() < 0.5 else _more_novel(r)
            out.append((NOVEL, _styled(text, r)))
    return out


def repeats(prompts: list) -> dict:
    """Distinct prompts and word-for-word repeats of a prompt set (a chat counts as all its turns)."""
    keys = [p if isinstance(p, str) else json.dumps(p, sort_keys=True) for _, p in prompts]
    distinct = len(set(keys))
    return dict(prompts=len(keys), distinct=distinct, repeats=len(keys) - distinct,
                repeat_share=round((len(keys) - distinct) / max(1, len(keys)), 4),
                copy_heavy=sum(k == COPY for k, _ in prompts), chats=sum(not isinstance(p, str) for _, p in prompts))


def texts(prompt) -> list[str]:
    """Every user and assistant text of a prompt (one for a plain prompt)."""
    return [prompt] if isinstance(prompt, str) else [m["content"] for m in prompt]
