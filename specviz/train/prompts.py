"""A varied, seeded prompt set for self-distillation: copy-heavy tasks and open-ended ones.

The copy material is local human text (docstrings and functions from Python's standard library,
parsed, never imported) and synthetic tables. None of the project's workload prompts is used.
"""
from __future__ import annotations

import ast
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
        return f"Summarise the following text in three bullet points, reusing its wording:\n\n{d}"
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
        return r.choice(ASKS)
    if kind == 3:
        n = r.randint(3, 8)
        return f"Give me {n} ideas for names of {r.choice(THINGS)[2:].strip()}, each with a short reason."
    if kind == 4:
        return (f"Write a short email from a {r.choice(ROLES)} in {r.choice(CITIES)} to a colleague "
                f"about {r.choice(THINGS)}.")
    if kind == 5:
        return f"What are the pros and cons of living in {r.choice(CITIES)} as a {r.choice(ROLES)}?"
    return f"Describe a day in the life of {r.choice(PEOPLE)} who works as a {r.choice(ROLES)}."


def make_prompts(n: int, seed: int = 0, copy_share: float = 0.45) -> list[tuple[str, str]]:
    """n (kind, prompt text) pairs, reproducible from the seed."""
    r = random.Random(seed)
    docs, funcs = _stdlib_sources(seed)
    out = []
    for _ in range(n):
        if r.random() < copy_share:
            out.append((COPY, _copy_prompt(r, docs, funcs)))
        else:
            out.append((NOVEL, _novel_prompt(r)))
    return out
