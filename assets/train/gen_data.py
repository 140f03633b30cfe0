"""Seeded synthetic task mix for the embedded demonstration model.  Every example is a
question (user message), a short step-by-step reasoning (think channel) and a checkable
answer (response channel).  Tasks: add, sub, mul (multi-digit, column method), count_letter,
count_items, sort_numbers, sort_words, unit_convert, date_add, date_diff, reverse,
uppercase, nth_letter, word_problem; and the meta family (greeting, about_self,
out_of_scope) with a fixed short truthful reply per kind of prompt.  Training examples
are conversations of 1-4 such turns with thinking on, off or mixed (make_conversation),
and conversations with tools declared, where arithmetic goes through a `calculator` tool
call when one is declared (make_tool_conversation); conversation_messages picks one.

usage:
  python3 gen_data.py heldout OUT.jsonl [--n-per-task 25] [--seed 7] [--tools-out TOOLS.jsonl]
      writes the held-out evaluation file: the original 350 items, then the multi-turn,
      no-think and meta items; and the tool items to TOOLS.jsonl (fields in
      assets/eval/README.md).
  python3 gen_data.py sample N [--seed S]   prints N single turns.
  python3 gen_data.py conv N [--seed S] [--mix base|phase4]
      prints N training conversations (messages, tools) of the mix (no prompt excluded).
  python3 gen_data.py check N [--seed S] [--mix M] [--heldout FILES] [--tok ../model]
      generates N conversations as train.py does (held-out prompts excluded), fails if a
      held-out prompt is generated, and prints the mix's make-up by setting and task.
Training skips any turn whose prompt is a user message of the held-out file.
"""
import argparse
import datetime
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

TASKS = ["add", "sub", "mul", "count_letter", "count_items", "sort_numbers", "sort_words",
         "unit_convert", "date_add", "date_diff", "reverse", "uppercase", "nth_letter",
         "word_problem"]

WORDS = """apple banana cherry grape lemon mango melon orange peach pear plum berry kiwi lime
table chair couch lamp desk shelf door window floor house garden river ocean island
forest desert valley mountain planet comet rocket galaxy moon star cloud rain storm
thunder winter summer spring autumn morning evening night today pencil paper letter
button pocket jacket shirt shoe sock glove scarf hat basket bottle bucket candle
mirror ladder hammer nail rope wheel wagon train truck boat bridge castle tower
village market school library museum doctor farmer pilot singer driver teacher
student friend mother father sister brother baby kitten puppy rabbit turtle
tiger zebra monkey giraffe dolphin whale shark eagle parrot penguin spider beetle
honey bread butter cheese cookie pizza pasta salad soup sugar salt pepper tomato
potato carrot onion garlic coffee water juice music piano guitar violin drum
story poem number circle square triangle yellow purple silver golden green black
white orange simple quiet happy gentle clever brave strong little bright purple
strawberry blueberry chocolate elephant butterfly umbrella computer keyboard
notebook backpack sandwich pancake mushroom cucumber lantern dragon kingdom
journey picture balloon whistle blanket pillow kettle teapot jungle meadow""".split()
WORDS = sorted(set(WORDS))

NAMES = ["Tom", "Sara", "Ali", "Mia", "Leo", "Nina", "Omar", "Eva", "Ken", "Lily", "Ravi", "Zoe",
         "Ben", "Ana", "Max", "Ivy"]
THINGS = ["apples", "stickers", "marbles", "pencils", "cookies", "coins", "books", "cards",
          "shells", "stamps", "candies", "balloons"]

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
YEARS = list(range(2021, 2028))

UNITS = [  # (from singular, from plural, to plural, factor)
    ("kilometer", "kilometers", "meters", 1000), ("meter", "meters", "centimeters", 100),
    ("centimeter", "centimeters", "millimeters", 10), ("kilogram", "kilograms", "grams", 1000),
    ("liter", "liters", "milliliters", 1000), ("hour", "hours", "minutes", 60),
    ("minute", "minutes", "seconds", 60), ("day", "days", "hours", 24),
    ("week", "weeks", "days", 7), ("foot", "feet", "inches", 12), ("yard", "yards", "feet", 3),
    ("dollar", "dollars", "cents", 100)]


def ordinal(n):
    suf = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return "%d%s" % (n, suf)


# ----------------------------------------------------------------------------- arithmetic steps

def add_steps(a, b):
    """Column addition; returns (sentences, result)."""
    da, db = str(a)[::-1], str(b)[::-1]
    carry, out, digits = 0, [], []
    for i in range(max(len(da), len(db))):
        x = int(da[i]) if i < len(da) else 0
        y = int(db[i]) if i < len(db) else 0
        s = x + y + carry
        out.append("%d+%d+%d=%d, write %d, carry %d." % (x, y, carry, s, s % 10, s // 10))
        digits.append(s % 10)
        carry = s // 10
    if carry:
        out.append("Write the carry %d." % carry)
        digits.append(carry)
    res = int("".join(str(d) for d in digits[::-1]))
    return out, res


def sub_steps(a, b):
    """Column subtraction, a >= b."""
    da, db = str(a)[::-1], str(b)[::-1]
    borrow, out, digits = 0, [], []
    for i in range(len(da)):
        x = int(da[i])
        y = int(db[i]) if i < len(db) else 0
        s = x - y - borrow
        if s < 0:
            out.append("%d-%d-%d is below 0, so %d-%d-%d=%d, write %d, borrow 1." % (
                x, y, borrow, x + 10, y, borrow, s + 10, s + 10))
            digits.append(s + 10)
            borrow = 1
        else:
            out.append("%d-%d-%d=%d, write %d, borrow 0." % (x, y, borrow, s, s))
            digits.append(s)
            borrow = 0
    return out, a - b, "".join(str(d) for d in digits[::-1])


def mul1_steps(a, d):
    """a times a single digit d, column method."""
    carry, out, digits = 0, [], []
    for ch in str(a)[::-1]:
        x = int(ch)
        s = x * d + carry
        out.append("%d*%d+%d=%d, write %d, carry %d." % (x, d, carry, s, s % 10, s // 10))
        digits.append(s % 10)
        carry = s // 10
    if carry:
        out.append("Write the carry %d." % carry)
        digits.append(carry)
    return out, a * d


def mul_reasoning(a, b):
    """a*b with b of one or two digits."""
    if b < 10:
        st, r = mul1_steps(a, b)
        return "Multiply %d by %d from right to left. %s So %d*%d=%d." % (a, b, " ".join(st), a, b, r), r
    t, o = divmod(b, 10)
    s1, r1 = mul1_steps(a, o)
    s2, r2 = mul1_steps(a, t)
    s3, r3 = add_steps(r1, r2 * 10)
    txt = ("Split %d into %d and %d. First %d*%d: %s So %d*%d=%d. Then %d*%d: %s So %d*%d=%d, "
           "and %d*%d=%d. Add %d+%d from right to left: %s So %d*%d=%d." % (
               b, t * 10, o, a, o, " ".join(s1), a, o, r1, a, t, " ".join(s2), a, t, r2,
               a, t * 10, r2 * 10, r1, r2 * 10, " ".join(s3), a, b, r3))
    return txt, r3


def digits(rng, lo, hi):
    """A number with between lo and hi digits (uniform digit count)."""
    n = rng.randint(lo, hi)
    return rng.randint(0 if n == 1 else 10 ** (n - 1), 10 ** n - 1)


# ----------------------------------------------------------------------------- no-think answers
# With thinking off the model answers in the response channel straight away.  Written
# directly, multi-digit arithmetic, dates and letter counts came out wrong a third of the
# time or more (issue #20's model: no_think 69 %, add 3/6, sub 1/6, mul 2/6, date_diff 1/6),
# while the same steps in the think channel were right every time.  So a no-think answer
# to those tasks is the compact working, in the order the digits are computed, then the
# result ("direct" of an example); tasks the model answered right directly keep the bare
# answer.

def add_cols(a, b):
    """Column sums right to left: "x+y+carry=s", the compact form of add_steps."""
    da, db = str(a)[::-1], str(b)[::-1]
    carry, out = 0, []
    for i in range(max(len(da), len(db))):
        x = int(da[i]) if i < len(da) else 0
        y = int(db[i]) if i < len(db) else 0
        s = x + y + carry
        out.append("%d+%d+%d=%d" % (x, y, carry, s))
        carry = s // 10
    return ", ".join(out)


def sub_cols(a, b):
    """Column differences right to left, a >= b: "x-y-borrow=s", x written with the
    borrowed ten (x+10) where x-y-borrow is below 0."""
    da, db = str(a)[::-1], str(b)[::-1]
    borrow, out = 0, []
    for i in range(len(da)):
        x = int(da[i])
        y = int(db[i]) if i < len(db) else 0
        s = x - y - borrow
        if s < 0:
            out.append("%d-%d-%d=%d" % (x + 10, y, borrow, s + 10))
            borrow = 1
        else:
            out.append("%d-%d-%d=%d" % (x, y, borrow, s))
            borrow = 0
    return ", ".join(out)


def mul_cols(a, d):
    """a times one digit d, right to left: "x*d+carry=s"."""
    carry, out = 0, []
    for ch in str(a)[::-1]:
        s = int(ch) * d + carry
        out.append("%d*%d+%d=%d" % (int(ch), d, carry, s))
        carry = s // 10
    return ", ".join(out)


def mul_direct(a, b):
    if b < 10:
        return "%s. So %d*%d=%d." % (mul_cols(a, b), a, b, a * b)
    t, o = divmod(b, 10)
    return "%s: %d*%d=%d. %s: %d*%d=%d, so %d*%d=%d. %s: %d+%d=%d. So %d*%d=%d." % (
        mul_cols(a, o), a, o, a * o, mul_cols(a, t), a, t, a * t, a, t * 10, a * t * 10,
        add_cols(a * o, a * t * 10), a * o, a * t * 10, a * b, a, b, a * b)


# ----------------------------------------------------------------------------- tasks

def t_add(rng):
    a, b = digits(rng, 1, 4), digits(rng, 1, 4)
    q = rng.choice(["What is %d+%d?", "What is %d + %d?", "Compute %d + %d.", "Calculate %d plus %d."]) % (a, b)
    st, r = add_steps(a, b)
    return q, "Add the digits from right to left. %s So %d+%d=%d." % (" ".join(st), a, b, r), str(r), {
        "direct": "%s. So %d+%d=%d." % (add_cols(a, b), a, b, r), "expr": "%d+%d" % (a, b)}


def t_sub(rng):
    a, b = digits(rng, 1, 4), digits(rng, 1, 4)
    if a < b:
        a, b = b, a
    q = rng.choice(["What is %d-%d?", "What is %d - %d?", "Compute %d - %d.", "Calculate %d minus %d."]) % (a, b)
    st, r, raw = sub_steps(a, b)
    tail = "The digits read %s, so %d-%d=%d." % (raw, a, b, r)
    return q, "Subtract the digits from right to left. %s %s" % (" ".join(st), tail), str(r), {
        "direct": "%s. So %d-%d=%d." % (sub_cols(a, b), a, b, r), "expr": "%d-%d" % (a, b)}


def t_mul(rng, two_by_two=False):
    """two_by_two: always 2 x 2 digits (the phase-4 mix's extra thinking-off practice)."""
    if not two_by_two and rng.random() < 0.5:
        a, b = digits(rng, 1, 3), rng.randint(2, 9)
    else:
        a, b = digits(rng, 2, 2), digits(rng, 2, 2)
    q = rng.choice(["What is %d*%d?", "What is %d * %d?", "Compute %d * %d.", "Calculate %d times %d."]) % (a, b)
    txt, r = mul_reasoning(a, b)
    return q, txt, str(r), {"direct": mul_direct(a, b), "expr": "%d*%d" % (a, b)}


def t_count_letter(rng):
    w = rng.choice(WORDS)
    c = rng.choice(w) if rng.random() < 0.8 else rng.choice("abcdefghijklmnopqrstuvwxyz")
    q = rng.choice(['How many times does the letter "%s" appear in "%s"?',
                    'Count the letter "%s" in the word "%s".']) % (c, w)
    n, steps = 0, []
    for ch in w:
        n += ch == c
        steps.append("%s %d" % (ch, n))
    return q, 'Go through "%s" and count "%s": %s. The count is %d.' % (w, c, ", ".join(steps), n), str(n), {
        "direct": "%s. The count is %d." % (", ".join(steps), n)}


def t_count_items(rng):
    items = rng.sample(WORDS, rng.randint(2, 12))
    q = rng.choice(["How many items are in this list: %s?", "Count the items: %s."]) % ", ".join(items)
    steps = ", ".join("%s %d" % (it, i + 1) for i, it in enumerate(items))
    return q, "Number the items: %s. There are %d items." % (steps, len(items)), str(len(items)), {
        "direct": "%s. There are %d items." % (steps, len(items))}


def selection(items, key, name):
    """Selection sort explained step by step."""
    rest, out, steps = list(items), [], []
    while len(rest) > 1:
        m = min(rest, key=key)
        steps.append("The %s of %s is %s." % (name, ", ".join(map(str, rest)), m))
        out.append(m)
        rest.remove(m)
    steps.append("Last is %s." % rest[0])
    out.append(rest[0])
    return " ".join(steps), out


def t_sort_numbers(rng):
    nums = rng.sample(range(1, 100), rng.randint(3, 6))
    q = rng.choice(["Sort these numbers from smallest to largest: %s.",
                    "Put in ascending order: %s."]) % ", ".join(map(str, nums))
    txt, out = selection(nums, lambda x: x, "smallest")
    return q, txt, ", ".join(map(str, out))


def t_sort_words(rng):
    n = rng.randint(3, 5)
    by_first = {}
    for w in rng.sample(WORDS, len(WORDS)):
        by_first.setdefault(w[0], w)
    ws = rng.sample(sorted(by_first.values()), n)
    q = rng.choice(["Sort these words alphabetically: %s.", "Put these words in alphabetical order: %s."]) % ", ".join(ws)
    txt, out = selection(ws, lambda x: x, "first alphabetically")
    return q, txt, ", ".join(out)


def t_unit_convert(rng):
    fs, fp, to, f = rng.choice(UNITS)
    n = rng.randint(1, 99 if f in (10, 100, 1000, 3, 7) else 30)
    q = rng.choice(["Convert %d %s to %s.", "How many %s are in %d %s?"])
    q = q % ((n, fs if n == 1 else fp, to) if q.startswith("Convert") else (to, n, fs if n == 1 else fp))
    head = "One %s is %d %s, so multiply %d by %d." % (fs, f, to, n, f)
    if f in (10, 100, 1000):
        z = len(str(f)) - 1
        r = n * f
        txt = "%s Multiplying by %d appends %d zero%s: %d." % (head, f, z, "" if z == 1 else "s", r)
    elif f == 60:
        st, r6 = mul1_steps(n, 6)
        r = n * 60
        txt = "%s %d*60 is %d*6 with a zero appended. %d*6: %s So %d*6=%d, and %d*60=%d." % (
            head, n, n, n, " ".join(st), n, r6, n, r)
    else:
        body, r = mul_reasoning(n, f)
        txt = "%s %s" % (head, body)
    return q, txt, "%d %s" % (r, to)


def month_days(y, m):
    return (datetime.date(y + (m == 12), m % 12 + 1, 1) - datetime.date(y, m, 1)).days


def t_date_add(rng):
    y, m = rng.choice(YEARS), rng.randint(1, 12)
    d = rng.randint(1, month_days(y, m))
    n = rng.randint(1, 45)
    q = rng.choice(["What date is %d days after %04d-%02d-%02d?", "Add %d days to %04d-%02d-%02d."]) % (n, y, m, d)
    x = d + n
    steps = ["Start at day %d of %s %d. %d+%d=%d." % (d, MONTHS[m - 1], y, d, n, x)]
    short = ["%d+%d=%d." % (d, n, x)]
    while x > month_days(y, m):
        md = month_days(y, m)
        ny, nm = (y + 1, 1) if m == 12 else (y, m + 1)
        steps.append("%s %d has %d days, and %d is more than %d, so %d-%d=%d in %s %d." % (
            MONTHS[m - 1], y, md, x, md, x, md, x - md, MONTHS[nm - 1], ny))
        short.append("%s %d has %d days: %d-%d=%d in %s %d." % (
            MONTHS[m - 1], y, md, x, md, x - md, MONTHS[nm - 1], ny))
        x, y, m = x - md, ny, nm
    res = "%04d-%02d-%02d" % (y, m, x)
    steps.append("The date is %s." % res)
    return q, " ".join(steps), res, {"direct": " ".join(short) + " So %s." % res}


def t_date_diff(rng):
    y, m = rng.choice(YEARS), rng.randint(1, 12)
    md = month_days(y, m)
    if rng.random() < 0.4:
        d1, d2 = sorted(rng.sample(range(1, md + 1), 2))
        y2, m2 = y, m
        txt = "Both dates are in %s %d. %d-%d=%d." % (MONTHS[m - 1], y, d2, d1, d2 - d1)
        r = d2 - d1
        short = "Both in %s %d: %d-%d=%d." % (MONTHS[m - 1], y, d2, d1, r)
    else:
        d1 = rng.randint(1, md)
        y2, m2 = (y + 1, 1) if m == 12 else (y, m + 1)
        d2 = rng.randint(1, month_days(y2, m2))
        r = md - d1 + d2
        txt = ("%s %d has %d days. From day %d to the end of %s: %d-%d=%d. Then %d more days "
               "into %s. %d+%d=%d." % (MONTHS[m - 1], y, md, d1, MONTHS[m - 1], md, d1, md - d1,
                                         d2, MONTHS[m2 - 1], md - d1, d2, r))
        short = "%s %d has %d days: %d-%d=%d, %d+%d=%d." % (MONTHS[m - 1], y, md, md, d1, md - d1, md - d1, d2, r)
    q = rng.choice(["How many days are there from %04d-%02d-%02d to %04d-%02d-%02d?",
                    "How many days pass between %04d-%02d-%02d and %04d-%02d-%02d?"]) % (y, m, d1, y2, m2, d2)
    return q, txt, str(r), {"direct": "%s So %d." % (short, r)}


# Training-only phrasings of the single-word tasks: the held-out set took both original
# phrasings of 11 words (issue #20), so training never saw those words reversed or in
# capitals, and every reverse/uppercase miss of that model was such a word.  With these
# phrasings training sees every word in every task, while no held-out prompt is trained on.
TRAIN_PHRASINGS = {
    "reverse": ['What is "%s" spelled backwards?', 'Spell "%s" in reverse.', 'Reverse "%s".',
                'Write the word "%s" backwards.'],
    "uppercase": ['Write "%s" in uppercase.', 'Capitalise every letter of "%s".', 'Uppercase "%s".',
                  'Write the word "%s" in capital letters.'],
}


def t_reverse(rng, train=False):
    w = rng.choice(WORDS)
    q = rng.choice(['Reverse the word "%s".', 'Write "%s" backwards.'] + (TRAIN_PHRASINGS["reverse"] if train else [])) % w
    sp, bk = " ".join(w), " ".join(w[::-1])
    return q, "Spell it: %s. Backwards: %s." % (sp, bk), w[::-1], {"direct": "%s backwards is %s, so %s." % (sp, bk, w[::-1])}


def t_uppercase(rng, train=False):
    w = rng.choice(WORDS)
    q = rng.choice(['Write "%s" in capital letters.', 'Convert "%s" to uppercase.'] +
                   (TRAIN_PHRASINGS["uppercase"] if train else [])) % w
    return q, "Spell it: %s. In capitals: %s." % (" ".join(w), " ".join(w.upper())), w.upper()


def t_nth_letter(rng):
    w = rng.choice(WORDS)
    n = rng.randint(1, len(w))
    q = rng.choice(['What is the %s letter of "%s"?', 'Which letter is %s in "%s"?']) % (ordinal(n), w)
    steps = ", ".join("%s %d" % (w[i], i + 1) for i in range(n))
    return q, "Count the letters: %s. The %s letter is %s." % (steps, ordinal(n), w[n - 1]), w[n - 1], {
        "direct": "%s. The %s letter is %s." % (steps, ordinal(n), w[n - 1])}


def t_word_problem(rng):
    name, thing = rng.choice(NAMES), rng.choice(THINGS)
    kind = rng.randint(0, 3)
    a, b = rng.randint(2, 50), rng.randint(2, 30)
    if kind == 0:
        q = "%s has %d %s and gets %d more. How many %s does %s have now?" % (name, a, thing, b, thing, name)
        r, expr = a + b, "%d+%d" % (a, b)
        txt = "%s starts with %d and gets %d more. %d+%d=%d." % (name, a, b, a, b, r)
    elif kind == 1:
        a, b = max(a, b), min(a, b)
        q = "%s had %d %s and gave away %d. How many %s are left?" % (name, a, thing, b, thing)
        r, expr = a - b, "%d-%d" % (a, b)
        txt = "%s starts with %d and gives away %d. %d-%d=%d." % (name, a, b, a, b, r)
    elif kind == 2:
        a, b = rng.randint(2, 12), rng.randint(2, 9)
        q = "Each bag holds %d %s. How many %s are in %d bags?" % (a, thing, thing, b)
        st, r = mul1_steps(a, b)
        expr = "%d*%d" % (a, b)
        txt = "%d bags of %d each is %d*%d. %s So %d*%d=%d." % (b, a, a, b, " ".join(st), a, b, r)
    else:
        c = rng.randint(1, a + b - 1)
        q = "%s has %d %s, buys %d more, then gives %d to a friend. How many %s does %s have?" % (
            name, a, thing, b, c, thing, name)
        r, expr = a + b - c, "%d+%d-%d" % (a, b, c)
        txt = "%s starts with %d. After buying: %d+%d=%d. After giving: %d-%d=%d." % (
            name, a, a, b, a + b, a + b, c, r)
    return q, txt, str(r), {"expr": expr}


GEN = {name: globals()["t_" + name] for name in TASKS}


def make_example(rng, task=None, train=False, mul_2x2=False):
    """One question of the mix: task, prompt, reasoning, reference (the answer after
    thinking), direct (the answer with thinking off) and, for arithmetic, expr (the
    expression a calculator tool is called with).  train: the single-word tasks may use
    their training-only phrasings; mul_2x2: a mul question is 2 x 2 digits."""
    task = task or rng.choice(TASKS)
    if task in META:
        return make_meta(rng, task)
    r = GEN[task](rng, train) if task in TRAIN_PHRASINGS else t_mul(rng, mul_2x2) if task == "mul" else GEN[task](rng)
    ex = {"task": task, "prompt": r[0], "reasoning": r[1], "reference": r[2], "direct": r[2]}
    if len(r) > 3:
        ex.update(r[3])
    return ex


# ----------------------------------------------------------------------------- meta
# Greetings, questions about the model and out-of-scope questions get a short truthful
# reply: what the model is and what it can do.  The reply is fixed by the kind of prompt
# (the greeting word, the kind of question), so greedy decoding has one reply to find.

META = ["greeting", "about_self", "out_of_scope"]

INTRO = "I am remora's small demonstration model (56M parameters, Kimi K3 architecture)."
CAN = "I can do arithmetic, counting, sorting, unit and date conversion, string manipulation and short word problems."
TRY = "Try: What is 37*12?"

REPLY = {
    "hello": "%s! " + INTRO + " " + CAN + " " + TRY,
    "howru": "I am fine, thank you! " + INTRO + " " + CAN + " " + TRY,
    "thanks": "You are welcome! Ask me another question, for example: What is 37*12?",
    "bye": "Goodbye! Come back any time for arithmetic, counting, sorting, unit and date conversion, "
           "string manipulation or short word problems.",
    "who": "I am remora's small demonstration model: 56M parameters in the Kimi K3 architecture, trained by "
           "the remora project on a small synthetic task mix. " + CAN + " " + TRY,
    "not": "No. I am remora's small demonstration model: I have the Kimi K3 architecture, but only 56M "
           "parameters, trained on a small synthetic task mix. " + CAN + " " + TRY,
    "can": "I can add, subtract and multiply whole numbers, count letters in a word or items in a list, sort "
           "numbers or words, convert units, add days to a date or count the days between two dates, reverse "
           "a word, write it in capitals or find its n-th letter, and solve short word problems. " + TRY,
    "size": "I have 56M parameters, about 17M of them active per token: the Kimi K3 architecture with MXFP4 "
            "experts, about 52 MB on disk. I am remora's small demonstration model. " + CAN,
}
OOS_HEAD = {"knowledge": "I do not know that.", "creative": "I cannot write that.",
            "code": "I cannot write or explain code.",
            "live": "I have no access to news, weather, prices or the time.",
            "advice": "I cannot give advice on that.",
            "math": "That is beyond my arithmetic: I only add, subtract and multiply whole numbers."}
OOS_TAIL = " " + INTRO + " " + CAN + " " + TRY
GREET_WORDS = ["Hello", "Hi", "Hey", "Good morning", "Good afternoon", "Good evening"]

REASON = {
    "hello": "The user greets me. I greet back and say what I am and what I can do.",
    "howru": "The user asks how I am. I answer and say what I am and what I can do.",
    "thanks": "The user thanks me. I say you are welcome and suggest another question.",
    "bye": "The user says goodbye. I say goodbye and what I can do.",
    "who": "The user asks who I am. I say what I am and what I can do.",
    "not": "The user asks whether I am another model. I am not: I am remora's small demonstration model.",
    "can": "The user asks what I can do. I list my tasks.",
    "size": "The user asks how big I am. I give my size.",
}
OOS_WHAT = {"knowledge": "general knowledge", "creative": "creative writing", "code": "programming",
            "live": "live information", "advice": "advice",
            "math": "math beyond adding, subtracting and multiplying whole numbers"}
OOS_REASON = "This asks for %s, which is not one of my tasks. I say so and what I can do."

# prompt bases: (text, kind); greetings carry the word the reply echoes
GREET_BASES = [("hello", "Hello"), ("hello there", "Hello"), ("hello remora", "Hello"), ("greetings", "Hello"),
               ("howdy", "Hello"), ("hallo", "Hello"), ("hi", "Hi"), ("hi there", "Hi"), ("hi remora", "Hi"),
               ("hiya", "Hi"), ("hey", "Hey"), ("hey there", "Hey"), ("hey remora", "Hey"), ("yo", "Hey"),
               ("good morning", "Good morning"), ("morning", "Good morning"),
               ("good afternoon", "Good afternoon"), ("good evening", "Good evening")]
HOWRU_BASES = ["how are you", "how are you doing", "how are you today", "how is it going", "how's it going",
               "hi, how are you", "hello, how are you", "hey, how are you", "what's up", "how do you do",
               "how are things"]
THANKS_BASES = ["thanks", "thank you", "thanks a lot", "thank you very much", "great, thanks", "ok, thanks",
                "cool, thank you", "thx", "many thanks", "perfect, thanks", "nice, thank you"]
BYE_BASES = ["bye", "goodbye", "bye bye", "see you", "see you later", "good night", "that's all, bye",
             "ok bye", "farewell", "bye for now"]
WHO_BASES = ["who are you", "what are you", "what is your name", "what's your name", "tell me about yourself",
             "introduce yourself", "what model are you", "what model is this", "which model are you",
             "who made you", "who trained you", "who built you", "what is remora", "describe yourself",
             "who am i talking to", "what am i talking to", "what is this"]
NOT_NAMES = ["Kimi K3", "Kimi", "Kimi K2", "ChatGPT", "GPT-4", "Claude", "Gemini", "Llama", "DeepSeek",
             "a human", "a person", "the real Kimi K3", "a large language model", "Moonshot's Kimi K3"]
NOT_BASES = ["are you %s" % n for n in NOT_NAMES] + ["is this %s" % n for n in NOT_NAMES[:9]] + \
            ["am i talking to %s" % n for n in NOT_NAMES[:9]]
CAN_BASES = ["what can you do", "what do you do", "what are you good at", "what tasks can you do",
             "what can i ask you", "what should i ask you", "what questions can you answer",
             "how can you help me", "help", "help me", "what do you know", "what are your skills",
             "show me what you can do", "what are you able to do", "list your tasks", "can you help me",
             "what are your tasks"]
SIZE_BASES = ["how big are you", "how many parameters do you have", "how large are you",
              "how large is this model", "what is your size", "how big is this model",
              "how many parameters are you", "what size are you"]

COUNTRIES = ["France", "Germany", "Japan", "Brazil", "Canada", "Italy", "Spain", "Egypt", "India", "China",
             "Kenya", "Peru", "Norway", "Mexico", "Australia", "Chile", "Greece", "Turkey", "Poland", "Sweden",
             "Vietnam", "Nigeria", "Argentina", "Portugal", "Ireland"]
CITIES = ["Paris", "London", "Tokyo", "Berlin", "New York", "Sydney", "Cairo", "Rome", "Madrid", "Toronto",
          "Mumbai", "Lagos", "Seoul", "Lima"]
PEOPLE = ["Albert Einstein", "Marie Curie", "Isaac Newton", "Cleopatra", "Napoleon", "Shakespeare", "Mozart",
          "Leonardo da Vinci", "Ada Lovelace", "Alan Turing", "Charles Darwin", "Frida Kahlo", "Nelson Mandela",
          "Gandhi", "Beethoven", "Galileo"]
BOOKS = ["Hamlet", "War and Peace", "Don Quixote", "Pride and Prejudice", "Moby Dick", "The Odyssey",
         "Romeo and Juliet", "Faust", "Ulysses", "The Hobbit"]
CONCEPTS = ["photosynthesis", "gravity", "democracy", "quantum computing", "inflation", "evolution",
            "electricity", "black holes", "the internet", "machine learning", "climate change", "relativity",
            "DNA", "volcanoes", "the stock market", "blockchain", "a rainbow", "the immune system"]
LANGS = ["French", "German", "Spanish", "Italian", "Japanese", "Chinese", "Russian", "Arabic", "Portuguese",
         "Korean"]
PLANGS = ["Python", "C", "JavaScript", "Rust", "Java", "Go", "SQL", "Bash", "C++", "Haskell"]
CODE_DO = ["reverse a string", "sort a list", "read a file", "check if a number is prime",
           "compute a factorial", "merge two dictionaries", "count the words in a text", "parse JSON",
           "open a socket", "make a web page"]
TOPICS = ["the sea", "love", "autumn", "a cat", "the moon", "friendship", "the city", "rain", "a dragon",
          "the mountains", "coffee", "winter", "a robot", "time", "the stars", "my dog", "a lost key",
          "the summer", "an old tree", "the wind"]
PHRASES = ["good morning", "thank you", "where is the station", "I love you", "how much is this",
           "the cat is black", "see you tomorrow"]
COMPANIES = ["Apple", "Tesla", "Google", "Amazon", "Microsoft", "Nvidia"]
EVENTS = ["World Cup", "Super Bowl", "Tour de France", "last election", "Champions League", "Oscars"]
DISHES = ["pasta", "rice", "pancakes", "soup", "an egg", "a steak", "curry", "bread"]
BUY = ["car", "house", "phone", "bike", "laptop", "dog"]
RECS = ["book", "movie", "restaurant", "song", "game", "podcast"]
BEST = ["phone", "laptop", "programming language", "movie", "city to live in", "diet"]
FIX = ["bike", "computer", "sink", "printer", "wifi", "car"]
TIPS = ["sleeping better", "studying", "a job interview", "saving money", "running a marathon"]


def _topic(rng):
    return rng.choice(TOPICS) if rng.random() < 0.6 else "the " + rng.choice(WORDS)


def oos_prompt(rng, kind):
    c, p, t = rng.choice, rng.randint, _topic
    if kind == "knowledge":
        return c([lambda: "What is the capital of %s?" % c(COUNTRIES), lambda: "Who was %s?" % c(PEOPLE),
                  lambda: "Who is %s?" % c(PEOPLE), lambda: "Who wrote %s?" % c(BOOKS),
                  lambda: "When was %s born?" % c(PEOPLE), lambda: "What is %s?" % c(CONCEPTS),
                  lambda: "Explain %s." % c(CONCEPTS), lambda: "Explain %s in simple terms." % c(CONCEPTS),
                  lambda: "How does %s work?" % c(CONCEPTS), lambda: "What language is spoken in %s?" % c(COUNTRIES),
                  lambda: "What is the population of %s?" % c(COUNTRIES + CITIES),
                  lambda: "How far is %s from %s?" % tuple(rng.sample(CITIES, 2)),
                  lambda: "Tell me about %s." % c(PEOPLE + CITIES + CONCEPTS),
                  lambda: "Why is the sky blue?", lambda: "How many moons does Jupiter have?",
                  lambda: "What is the tallest mountain in the world?", lambda: "Where is %s?" % c(CITIES),
                  lambda: "What is %s famous for?" % c(CITIES + COUNTRIES + PEOPLE)])()
    if kind == "creative":
        return c([lambda: "Write a poem about %s." % t(rng), lambda: "Write a short story about %s." % t(rng),
                  lambda: "Write a haiku about %s." % t(rng), lambda: "Tell me a joke.",
                  lambda: "Tell me a joke about %s." % t(rng), lambda: "Write a song about %s." % t(rng),
                  lambda: "Write a letter to %s." % c(PEOPLE), lambda: "Make up a riddle.",
                  lambda: "Write a limerick about %s." % t(rng), lambda: "Describe %s in three sentences." % t(rng),
                  lambda: 'Translate "%s" into %s.' % (c(PHRASES), c(LANGS)),
                  lambda: "Write an essay on %s." % c(CONCEPTS)])()
    if kind == "code":
        return c([lambda: "Write a %s function to %s." % (c(PLANGS), c(CODE_DO)),
                  lambda: "How do I %s in %s?" % (c(CODE_DO), c(PLANGS)),
                  lambda: "Fix this %s code: print(x" % c(PLANGS),
                  lambda: "Explain recursion in %s." % c(PLANGS),
                  lambda: "Write a %s program that prints hello world." % c(PLANGS),
                  lambda: "What is a pointer in C?", lambda: "Write a regular expression for email addresses.",
                  lambda: "What is the difference between %s and %s?" % tuple(rng.sample(PLANGS, 2))])()
    if kind == "live":
        return c([lambda: "What is the news today?", lambda: "What's the weather in %s?" % c(CITIES),
                  lambda: "What is the weather like today?", lambda: "What time is it?",
                  lambda: "What time is it in %s?" % c(CITIES), lambda: "What day is it today?",
                  lambda: "What is today's date?", lambda: "What is the price of bitcoin?",
                  lambda: "Who won the game last night?", lambda: "What is the stock price of %s?" % c(COMPANIES),
                  lambda: "Who won the %s?" % c(EVENTS), lambda: "Will it rain tomorrow in %s?" % c(CITIES)])()
    if kind == "advice":
        return c([lambda: "How do I cook %s?" % c(DISHES), lambda: "What should I eat for dinner?",
                  lambda: "Should I buy a %s?" % c(BUY), lambda: "How can I lose weight?",
                  lambda: "How do I learn %s?" % c(LANGS + PLANGS),
                  lambda: "Can you recommend a good %s?" % c(RECS), lambda: "What is the best %s?" % c(BEST),
                  lambda: "How do I fix my %s?" % c(FIX), lambda: "Give me tips for %s." % c(TIPS)])()
    a, b = p(2, 99), p(2, 12)
    return c([lambda: "What is %d/%d?" % (a * b, b), lambda: "What is %d divided by %d?" % (a * b, b),
              lambda: "What is the square root of %d?" % (a * a), lambda: "What is %d squared?" % a,
              lambda: "What is %d to the power of %d?" % (b, p(2, 5)), lambda: "What is %d%% of %d?" % (p(1, 9) * 10, a * 10),
              lambda: "Solve %dx + %d = %d." % (b, a, a + b * p(1, 9)), lambda: "Is %d a prime number?" % a,
              lambda: "What is the derivative of x^%d?" % b, lambda: "What is pi?",
              lambda: "What is %d.%d + %d.%d?" % (p(1, 9), p(1, 9), p(1, 9), p(1, 9)),
              lambda: "What is -%d + %d?" % (a, b), lambda: "What is %d mod %d?" % (a, b)])()


OOS_KINDS = list(OOS_HEAD)


def _style(rng, base, puncts):
    r = rng.random()
    s = base
    if r < 0.45:
        s = s[0].upper() + s[1:]
    elif r < 0.5:
        s = s.upper()
    s = s.replace(" i ", " I ").replace(" i'", " I'")
    return s + rng.choice(puncts)


def make_meta(rng, family, kind=None, pos=0):
    """A meta example; kind picks the prompt kind (hello howru thanks bye | who not can size |
    an OOS kind); pos (the turn's position) makes thanks/bye likelier after the first turn."""
    if family == "greeting":
        if kind is None:
            kind = rng.choice(["hello", "hello", "howru"]) if pos == 0 else \
                rng.choice(["thanks", "thanks", "bye", "hello", "howru"])
        if kind == "hello":
            base, word = rng.choice(GREET_BASES)
            q, ans = _style(rng, base, ["", "!", ".", "!!", ""]), REPLY["hello"] % word
        else:
            bases = {"howru": HOWRU_BASES, "thanks": THANKS_BASES, "bye": BYE_BASES}[kind]
            q = _style(rng, rng.choice(bases), ["?", "?", ""] if kind == "howru" else ["", "!", "."])
            ans = REPLY[kind]
        return {"task": family, "kind": kind, "prompt": q, "reasoning": REASON[kind], "reference": ans}
    if family == "about_self":
        kind = kind or rng.choice(["who", "who", "not", "can", "can", "size"])
        bases = {"who": WHO_BASES, "not": NOT_BASES, "can": CAN_BASES, "size": SIZE_BASES}[kind]
        q = _style(rng, rng.choice(bases), ["?", "?", "?", ""])
        return {"task": family, "kind": kind, "prompt": q, "reasoning": REASON[kind], "reference": REPLY[kind]}
    kind = kind or rng.choice(OOS_KINDS)
    return {"task": family, "kind": kind, "prompt": oos_prompt(rng, kind),
            "reasoning": OOS_REASON % OOS_WHAT[kind], "reference": OOS_HEAD[kind] + OOS_TAIL}


def accepted(family, kind):
    """The replies scored as right for a meta item of this family and kind (the rule of
    assets/eval/README.md): greetings accept any greeting or self-introduction reply,
    questions about the model any reply that says what it is, out-of-scope questions any
    out-of-scope reply."""
    greet = [REPLY["hello"] % w for w in GREET_WORDS] + [REPLY["howru"], REPLY["who"]]
    if family == "greeting":
        return {"hello": greet, "howru": greet, "thanks": [REPLY["thanks"]], "bye": [REPLY["bye"]]}[kind]
    if family == "about_self":
        return {"who": [REPLY["who"], REPLY["not"]], "not": [REPLY["not"], REPLY["who"]],
                "can": [REPLY["can"], REPLY["who"]], "size": [REPLY["size"]]}[kind]
    return [OOS_HEAD[k] + OOS_TAIL for k in OOS_KINDS]


# ----------------------------------------------------------------------------- conversations

P_META = 0.08          # share of turns that are meta
META_SHARE = [("greeting", 0.3), ("about_self", 0.3), ("out_of_scope", 0.4)]


def make_turn(rng, pos, exclude=()):
    """One question of a conversation, never a prompt of `exclude`."""
    while True:
        if rng.random() < P_META:
            r, fam = rng.random(), None
            for fam, w in META_SHARE:
                if r < w:
                    break
                r -= w
            ex = make_meta(rng, fam, pos=pos)
        else:
            ex = make_example(rng, train=True)
        if ex["prompt"] not in exclude:
            return ex


def make_conversation(rng, exclude=()):
    """A training conversation: 1-4 turns and the thinking setting the chat renders it
    with.  think: every turn answered with reasoning; nothink: thinking off throughout
    (the history shows no reasoning); mixed: thinking on now, but some earlier turns were
    answered with thinking off (their think block is empty).  Returns (turns, thinking,
    reasoned) with reasoned[i] whether turn i carries its reasoning."""
    n = rng.choices([1, 2, 3, 4], weights=[3, 3, 2, 2])[0]
    turns = [make_turn(rng, i, exclude) for i in range(n)]
    r = rng.random()
    if r < 0.6:
        return turns, True, [True] * n
    if r < 0.9 or n == 1:
        return turns, False, [False] * n
    return turns, True, [rng.random() < 0.5 for _ in range(n - 1)] + [True]


def history_messages(turns, thinking):
    """Earlier turns as chat messages (a transcript's lines): with thinking on each
    assistant message keeps its reasoning_content, as the chat keeps it."""
    out = []
    for ex in turns:
        out.append({"role": "user", "content": ex["prompt"]})
        m = {"role": "assistant", "content": ex["reference"]}
        if thinking:
            m["reasoning_content"] = ex["reasoning"]
        out.append(m)
    return out


# ----------------------------------------------------------------------------- tools
# A request may declare tools (an OpenAI `tools` array; remora serve renders it as K3's
# tool-declare system message before the conversation, engine/text/template.c).  When a
# tool named "calculator" with a string argument "expression" is declared, whatever its
# description and whatever other tools are declared with it, an arithmetic question is
# answered by calling it: the assistant message has an empty response and a tools block
# with one call; then comes the tool message with the result and a second assistant
# message that answers from that result.  Any other question is answered as without
# tools, and so is arithmetic when no calculator is declared.

ARITH = ("add", "sub", "mul", "word_problem")

CALC_DESCS = [
    "Evaluate an arithmetic expression.", "A simple calculator.", "Calculator for math expressions.",
    "Evaluates a mathematical expression and returns the result.", "Use this for any arithmetic.",
    "Computes + - * on whole numbers.", "Basic calculator: pass an expression such as 2+2.",
    "Do math.", "Returns the value of the expression.", "A calculator tool.",
    "Tool for calculations. Always use it instead of mental arithmetic.",
    "Evaluate a Python-style numeric expression.", "calc", "Math helper.",
]
CALC_ARG_DESCS = ["The expression to evaluate.", "An arithmetic expression, e.g. 3*4.", "Math expression",
                  "What to compute."]

OTHER_TOOLS = [  # (name, descriptions, {argument: description or None}, required)
    ("get_weather", ["Get the current weather for a city.", "Weather lookup.", "Returns today's forecast."],
     {"location": "City name, e.g. Paris", "unit": None}, ["location"]),
    ("search_web", ["Search the web.", "Look something up on the internet.", "Web search engine."],
     {"query": "The search query"}, ["query"]),
    ("send_email", ["Send an email.", "Email a person."], {"to": None, "subject": None, "body": None},
     ["to", "body"]),
    ("read_file", ["Read a file from disk.", "Return the contents of a file."], {"path": "Absolute path"},
     ["path"]),
    ("get_time", ["Current time in a time zone.", "What time is it."], {"timezone": None}, ["timezone"]),
    ("translate", ["Translate text into another language.", "Translator."], {"text": None, "target": None},
     ["text", "target"]),
    ("lookup_word", ["Dictionary definition of a word.", "Define a word."], {"word": None}, ["word"]),
    ("convert_currency", ["Convert money between currencies.", "Currency exchange rates."],
     {"amount": None, "from": None, "to": None}, ["amount", "from", "to"]),
    ("create_event", ["Add an event to the calendar.", "Calendar: new event."],
     {"title": None, "date": "YYYY-MM-DD"}, ["title", "date"]),
    ("run_shell", ["Run a shell command.", "Execute a command in a terminal."], {"command": None}, ["command"]),
    ("get_stock_price", ["Latest stock price for a ticker.", "Stock quotes."], {"ticker": None}, ["ticker"]),
    ("play_music", ["Play a song.", "Music player."], {"song": None}, ["song"]),
    ("set_timer", ["Start a timer.", "Countdown timer in minutes."], {"minutes": None}, ["minutes"]),
    ("wikipedia", ["Fetch a Wikipedia article summary.", "Encyclopedia lookup."], {"title": None}, ["title"]),
]


def _function(name, desc, props, required):
    fn = {"name": name}
    if desc is not None:
        fn["description"] = desc
    fn["parameters"] = {"type": "object", "properties": props, "required": required}
    return {"type": "function", "function": fn}


def calculator_tool(rng):
    """The calculator declaration, in the issue's form, with a description drawn from
    CALC_DESCS, made of random words, or absent."""
    r = rng.random()
    desc = rng.choice(CALC_DESCS) if r < 0.7 else None if r < 0.8 else \
        " ".join(rng.sample(WORDS, rng.randint(1, 6))).capitalize() + "."
    arg = {"type": "string"}
    if rng.random() < 0.3:
        arg["description"] = rng.choice(CALC_ARG_DESCS)
    return _function("calculator", desc, {"expression": arg}, ["expression"])


def other_tool(rng, spec):
    name, descs, args, req = spec
    props = {}
    for k, d in args.items():
        props[k] = {"type": "number" if k in ("amount", "minutes") else "string"}
        if d and rng.random() < 0.6:
            props[k]["description"] = d
    return _function(name, rng.choice(descs) if rng.random() < 0.9 else None, props, req)


def make_tools(rng, calculator, min_others=0):
    """A tools array: the calculator alone, the calculator among 1-3 other tools, or 1-3
    other tools only."""
    lo = max(min_others, 0 if calculator else 1)
    tools = [other_tool(rng, sp) for sp in rng.sample(OTHER_TOOLS, rng.randint(lo, 3))]
    if calculator:
        tools.insert(rng.randint(0, len(tools)), calculator_tool(rng))
    return tools


def t_calc(rng):
    """An arithmetic question for the calculator, with larger numbers than the tasks
    without tools (up to 6 digits): with a calculator the model only copies them."""
    op = rng.choice("+-*")
    a, b = digits(rng, 1, 6), digits(rng, 1, 6 if op != "*" else 4)
    if op == "-" and a < b and rng.random() < 0.8:
        a, b = b, a
    word = {"+": "plus", "-": "minus", "*": "times"}[op]
    q = rng.choice(["What is %d%s%d?", "What is %d %s %d?", "Compute %d %s %d.", "Calculate %d %s %d.",
                    "Use the calculator: %d%s%d", "How much is %d %s %d?"])
    q = q % (a, word if q.startswith("Calculate") else op, b)
    return {"task": {"+": "add", "-": "sub", "*": "mul"}[op], "prompt": q, "expr": "%d%s%d" % (a, op, b),
            "value": eval("%d%s%d" % (a, op, b))}


def calc_result(rng, value):
    """The tool message's content: the bare number, or JSON as some agents return it."""
    r = rng.random()
    return str(value) if r < 0.75 else json.dumps({"result": value}) if r < 0.9 else "Result: %d" % value


CALL_REASON = "This is arithmetic and the calculator tool is declared, so I call it with %s."
RESULT_REASON = "The calculator returned %s, so %s=%s."


def calc_call(expr, k=1):
    return {"id": "call_%d" % k, "type": "function",
            "function": {"name": "calculator", "arguments": json.dumps({"expression": expr})}}


def tool_round(rng, ex, thinking, k=1):
    """The messages of one calculator round: the question, the call, the result and the
    answer (the value as a number, as the tasks answer)."""
    value = ex["value"] if "value" in ex else int(ex["reference"])
    call = {"role": "assistant", "content": "", "tool_calls": [calc_call(ex["expr"], k)]}
    final = {"role": "assistant", "content": str(value)}
    if thinking:
        call["reasoning_content"] = CALL_REASON % ex["expr"]
        final["reasoning_content"] = RESULT_REASON % (value, ex["expr"], value)
    return [{"role": "user", "content": ex["prompt"]}, call,
            {"role": "tool", "tool_call_id": "call_%d" % k, "content": calc_result(rng, value)}, final]


def answer_message(ex, thinking, bare=False):
    """The assistant message answering ex without tools: with thinking on the reasoning and
    the answer, with thinking off the direct answer (bare: the answer alone, as older
    transcripts show it)."""
    if thinking:
        return {"role": "assistant", "content": ex["reference"], "reasoning_content": ex["reasoning"]}
    return {"role": "assistant", "content": ex["reference"] if bare else ex.get("direct", ex["reference"])}


P_TOOLS = 0.25         # share of training conversations that declare tools


def make_tool_conversation(rng, exclude=()):
    """A training conversation with tools declared: 1-3 turns, thinking on (60 %) or off
    throughout; with the calculator declared about half the questions are arithmetic and
    go through it.  Returns (messages, tools, thinking)."""
    calculator = rng.random() < 0.8
    tools = make_tools(rng, calculator)
    thinking = rng.random() < 0.6
    msgs, k = [], 1
    for pos in range(rng.choices([1, 2, 3], weights=[5, 3, 2])[0]):
        if calculator and rng.random() < 0.5:
            while True:
                ex = t_calc(rng) if rng.random() < 0.5 else make_example(rng, rng.choice(ARITH), train=True)
                if ex["prompt"] not in exclude:
                    break
        else:
            ex = make_turn(rng, pos, exclude)
        if calculator and "expr" in ex:
            msgs += tool_round(rng, ex, thinking, k)
            k += 1
        else:
            msgs += [{"role": "user", "content": ex["prompt"]}, answer_message(ex, thinking)]
    return msgs, tools, thinking


def turns_messages(rng, turns, reasoned, p_bare=0.25):
    """make_conversation's turns as chat messages: reasoned[i], the answer with its
    reasoning; otherwise the no-think answer, an earlier one bare with probability p_bare,
    as in older transcripts (and in the held-out multi_turn_no_think histories)."""
    msgs = []
    for i, (ex, r) in enumerate(zip(turns, reasoned)):
        msgs.append({"role": "user", "content": ex["prompt"]})
        if r:
            msgs.append(answer_message(ex, True))
        else:
            msgs.append(answer_message(ex, False, bare=i < len(turns) - 1 and rng.random() < p_bare))
    return msgs


MIXES = ("base", "phase4")


def conversation_messages(rng, exclude=(), mix="base"):
    """A training conversation as chat messages: with tools (P_TOOLS) or as
    make_conversation makes it ("base", the mix of phases 1-3); "phase4" draws a
    focus conversation (make_focus_conversation) P_FOCUS of the time and a base one
    otherwise (the replay).  Returns (messages, tools or None, thinking); with thinking
    on, an assistant message without reasoning_content was answered with thinking off
    (the chat shows an empty think block, and it is context only)."""
    if mix == "phase4" and rng.random() < P_FOCUS:
        return make_focus_conversation(rng, exclude)
    if rng.random() < P_TOOLS:
        return make_tool_conversation(rng, exclude)
    turns, thinking, reasoned = make_conversation(rng, exclude)
    return turns_messages(rng, turns, reasoned), None, thinking


# ----------------------------------------------------------------------------- phase-4 mix
# Phase 3's model (issue #27) missed, on the held-out set: multi_turn_no_think 39/42
# (a letter count, a date with no month carry, a word sort), no_think 82/84, greetings
# 18/20 and questions about the model 22/24 (hand-written phrasings no template made:
# "Good day!" got the goodbye reply, "hey you", "Tell me what you are." and "Who or what
# are you?" the task list), sort_numbers 24/25, and outside the set `What is 19*19?`
# with thinking off (1001).  Phase 4 is a short fine-tune from that model in which half
# the conversations are focus conversations on those weak spots and the other half the
# base mix (replay, so that tools, thinking on and the rest do not regress).  The focus
# meta turns use wider templates (meta_varied) and skip any prompt that equals a
# held-out prompt up to case, spaces and punctuation, not only an identical one.

P_FOCUS = 0.5
FOCUS_KINDS = [("nothink_multi", 0.45), ("nothink_single", 0.10), ("think", 0.25), ("meta", 0.20)]
FOCUS_TASK_W = {"add": 1.5, "sub": 2, "mul": 3, "count_letter": 2, "count_items": 1, "sort_numbers": 2.5,
                "sort_words": 2, "unit_convert": 1, "date_add": 2.5, "date_diff": 1.5, "reverse": 1.5,
                "uppercase": 1.5, "nth_letter": 1, "word_problem": 1}
P_FOCUS_META = 0.12     # meta share of the other focus turns
P_MUL_2X2 = 0.6         # focus mul turns that are 2 x 2 digits (19*19)
P_FOCUS_BARE = 0.5      # earlier thinking-off answers shown bare (the base mix: 0.25)
FOCUS_META_W = [("greeting", 0.4), ("about_self", 0.4), ("out_of_scope", 0.2)]

# Wider phrasings for the meta kinds: a greeting word with an optional addressee and
# tail; direct and indirect questions about the model.
GREET_HEADS = [("hello", "Hello"), ("hi", "Hi"), ("hey", "Hey"), ("hiya", "Hi"), ("heya", "Hey"),
               ("howdy", "Hello"), ("greetings", "Hello"), ("g'day", "Hello"), ("hullo", "Hello"),
               ("yo", "Hey"), ("hello again", "Hello"), ("hi again", "Hi"), ("hey again", "Hey"),
               ("good morning", "Good morning"), ("morning", "Good morning"),
               ("good afternoon", "Good afternoon"), ("afternoon", "Good afternoon"),
               ("good evening", "Good evening"), ("evening", "Good evening")]
GREET_TO = ["", "", "", "", " there", " remora", " model", " bot", " assistant", " buddy", " mate",
            " everyone", " all", " folks", " little model", " robot", " pal", " demo model"]
GREET_TAILS = ["", "", "", "", ", nice to meet you", ", good to see you", ", I'm new here",
               ", I have a question", ", it's me", " :)", ", anyone there", ", is this thing on",
               ", I'm back"]
HOWRU_MORE = ["how have you been", "how's your day", "how is your day going", "how's everything",
              "how are you feeling", "are you doing well", "how are you, remora", "how are you today, remora",
              "how are things going", "how's life", "hey, what's up", "hi, how's it going",
              "good morning, how are you", "how are you doing, model"]
WHO_MORE = ["who exactly are you", "what are you exactly", "who are you exactly", "what sort of model are you",
            "what type of model are you", "what kind of assistant are you", "what kind of bot are you",
            "what kind of ai are you", "what kind of program are you", "what sort of thing are you",
            "which model is this", "who is this", "who am i chatting with", "what am i chatting with",
            "what is this model", "what is this thing", "so who are you", "and who are you",
            "who are you really", "what exactly is this", "whats your name", "do you have a name",
            "what should i call you", "tell me about you", "who created you", "who made this model",
            "where do you come from", "what are you called", "are you a bot"]
WHO_ASK = ["tell me", "please tell me", "can you tell me", "could you tell me", "i want to know",
           "i'd like to know", "i wonder", "explain"]
WHO_CLAUSES = ["who you are", "what you are", "what model you are", "what kind of model you are",
               "who made you", "who trained you", "what your name is", "what this is", "who i am talking to",
               "what i am talking to"]
WHO_ABOUT = ["about yourself", "a bit about yourself", "something about yourself", "more about yourself"]
CAN_MORE = ["what kinds of things can you do", "what kind of questions can i ask", "what questions do you handle",
            "what can you help me with", "what can you help with", "what is your purpose", "what are you useful for",
            "what do you handle", "what jobs can you do", "what can you answer", "what is your job",
            "what are you meant to do", "tell me what you can do", "please tell me what you can do",
            "what are you capable of", "what can this model do", "what else can you do", "show me your skills",
            "what tasks do you know", "which questions can you answer"]


def norm_prompt(p):
    """A prompt up to case, spaces and punctuation: "Good day!" and "good day" are one."""
    return " ".join("".join(ch for ch in p.lower() if ch.isalnum() or ch == " ").split())


_NORM = {}


def norm_set(exclude):
    """norm_prompt of every prompt in exclude (cached per exclude object)."""
    key = id(exclude)
    if key not in _NORM or _NORM[key][0] is not exclude:
        _NORM[key] = (exclude, {norm_prompt(p) for p in exclude})
    return _NORM[key][1]


def greet_phrase(rng):
    """A greeting: a head word, maybe an addressee (after a comma or not) and a tail;
    returns (text, the greeting word the reply echoes)."""
    head, word = rng.choice(GREET_HEADS)
    to = rng.choice(GREET_TO)
    if to and rng.random() < 0.3:
        to = "," + to
    return head + to + rng.choice(GREET_TAILS), word


def who_phrase(rng):
    r = rng.random()
    if r < 0.3:
        return rng.choice(WHO_BASES)
    if r < 0.6:
        return rng.choice(WHO_MORE)
    ask = rng.choice(WHO_ASK)
    if ask.startswith(("tell", "please", "can", "could")) and rng.random() < 0.3:
        return ask + " " + rng.choice(WHO_ABOUT)
    return ask + " " + rng.choice(WHO_CLAUSES)


def meta_varied(rng, family, pos=0):
    """A greeting or about_self example (make_meta's fields and replies) from the wider
    phrasings above or make_meta's own; other families as make_meta makes them."""
    if family == "greeting":
        kind = rng.choice(["hello", "hello", "howru"]) if pos == 0 else \
            rng.choice(["thanks", "bye", "hello", "hello", "howru"])
        if kind == "hello" and rng.random() < 0.7:
            base, word = greet_phrase(rng)
            return {"task": family, "kind": kind, "prompt": _style(rng, base, ["", "!", ".", "!!", ""]),
                    "reasoning": REASON[kind], "reference": REPLY["hello"] % word}
        if kind == "howru" and rng.random() < 0.6:
            return {"task": family, "kind": kind, "prompt": _style(rng, rng.choice(HOWRU_MORE), ["?", "?", ""]),
                    "reasoning": REASON[kind], "reference": REPLY[kind]}
        return make_meta(rng, family, kind, pos)
    if family == "about_self":
        kind = rng.choice(["who", "who", "who", "not", "can", "can", "size"])
        if kind == "who":
            q = who_phrase(rng)
        elif kind == "can" and rng.random() < 0.6:
            q = rng.choice(CAN_MORE)
        else:
            return make_meta(rng, family, kind, pos)
        return {"task": family, "kind": kind, "prompt": _style(rng, q, ["?", "?", "?", "", "."]),
                "reasoning": REASON[kind], "reference": REPLY[kind]}
    return make_meta(rng, family, None, pos)


def _pick(rng, weighted):
    r = rng.random() * sum(w for _, w in weighted)
    for name, w in weighted:
        if r < w:
            return name
        r -= w
    return weighted[-1][0]


FOCUS_TASKS = sorted(FOCUS_TASK_W.items())


def make_focus_turn(rng, pos, exclude=(), meta_share=P_FOCUS_META):
    """One focus question: a meta prompt (meta_varied; never a held-out prompt up to case
    and punctuation) with probability meta_share, else a task drawn by FOCUS_TASK_W
    (mul mostly 2 x 2 digits), never a prompt of `exclude`."""
    if rng.random() < meta_share:
        return meta_varied_turn(rng, pos, exclude, FOCUS_META_W)
    while True:
        task = _pick(rng, FOCUS_TASKS)
        ex = make_example(rng, task, train=True, mul_2x2=task == "mul" and rng.random() < P_MUL_2X2)
        if ex["prompt"] not in exclude:
            return ex


def make_focus_conversation(rng, exclude=()):
    """A focus conversation (FOCUS_KINDS): thinking off with 2-4 turns (the held-out
    multi_turn_no_think scores turns 2, 3 and 4 alike) or one turn, thinking on with 1-3
    turns, or a meta conversation (1-2 turns, one of them a greeting or a question about
    the model; thinking on 70 %).  With thinking off half the earlier answers are bare
    (the held-out histories show only bare answers).  Returns (messages, None, thinking)."""
    kind = _pick(rng, FOCUS_KINDS)
    if kind == "meta":
        n = rng.choice([1, 1, 2])
        at = rng.randrange(n)
        turns = [meta_varied_turn(rng, i, exclude, [("greeting", 1), ("about_self", 1)]) if i == at
                 else make_focus_turn(rng, i, exclude) for i in range(n)]
        thinking = rng.random() < 0.7
    else:
        n = {"nothink_multi": rng.choice([2, 3, 4]), "nothink_single": 1,
             "think": rng.choices([1, 2, 3], weights=[3, 2, 1])[0]}[kind]
        turns = [make_focus_turn(rng, i, exclude) for i in range(n)]
        thinking = kind == "think"
    return turns_messages(rng, turns, [thinking] * len(turns), P_FOCUS_BARE), None, thinking


def meta_varied_turn(rng, pos, exclude, families):
    """A meta_varied example of a family drawn by the weights `families`, never a prompt
    of `exclude` up to case, spaces and punctuation (norm_prompt)."""
    while True:
        ex = meta_varied(rng, _pick(rng, families), pos)
        if ex["prompt"] not in exclude and norm_prompt(ex["prompt"]) not in norm_set(exclude):
            return ex


# ----------------------------------------------------------------------------- held-out set

def heldout(n_per_task, seed):
    """The original 350 single-turn items (seed 7, 25 per task): unchanged."""
    rng = random.Random(seed)
    out, seen = [], set()
    for task in TASKS:
        k = 0
        while k < n_per_task:
            ex = make_example(rng, task)
            if ex["prompt"] in seen:
                continue
            seen.add(ex["prompt"])
            out.append(ex)
            k += 1
    return out


# Prompts users type first: kept out of the held-out set so training sees them.
CANON = {"hello", "hi", "hey", "who are you", "what can you do", "help", "are you kimi k3", "thanks",
         "thank you", "bye", "what are you"}

# Hand-written held-out prompts that no template of the generator produces.
FREE = {
    "greeting": [("Good day!", "hello"), ("hello hello", "hello"), ("Hi friend!", "hello"),
                 ("hey you", "hello")],
    "about_self": [("Tell me what you are.", "who"), ("What kind of model are you?", "who"),
                   ("Who or what are you?", "who"), ("What exactly are you?", "who"),
                   ("What kinds of questions do you handle?", "can"), ("What are you for?", "can")],
    "out_of_scope": [("Can you help me with my taxes?", "advice"), ("What's the best movie of all time?", "advice"),
                     ("Who painted the Mona Lisa?", "knowledge"), ("How do airplanes fly?", "knowledge"),
                     ("Write an email to my boss asking for a day off.", "creative"),
                     ("What are the symptoms of the flu?", "knowledge"), ("Give me a recipe for banana bread.", "advice"),
                     ("Play a game of chess with me.", "creative"), ("What is the meaning of life?", "knowledge"),
                     ("Translate good night into Italian.", "creative"),
                     ("Which planet is closest to the sun?", "knowledge"), ("Draw a picture of a horse.", "creative"),
                     ("What happened in 1969?", "knowledge"), ("Can you book a table for two tonight?", "live"),
                     ("Explain the rules of football.", "knowledge"), ("How much is a third of 90?", "math"),
                     ("Recommend a name for my new puppy.", "advice"), ("What do cats eat?", "knowledge"),
                     ("Why do we dream?", "knowledge"), ("Sing me a lullaby.", "creative")],
}
N_NEW = {"multi_turn": 6, "multi_turn_no_think": 3, "no_think": 6}       # per task
N_META = {"greeting": 16, "about_self": 18, "out_of_scope": 20}           # templated, besides FREE


def heldout_new(seed, taken):
    """The items added for multi-turn, no-think and meta (issue #20).  taken: prompts
    already in the set (grows).  Multi-turn items score turn 2, 3 or 4 (evenly); their
    history turns are tasks of the mix with the reference reasoning and answers."""
    rng = random.Random(seed)
    out = []

    def fresh(task, kind=None):
        while True:
            ex = make_meta(rng, task, kind) if task in META else make_example(rng, task)
            norm = ex["prompt"].lower().rstrip("?!. ")
            if ex["prompt"] not in taken and norm not in CANON:
                taken.add(ex["prompt"])
                return ex

    def item(task, ex, think=True, history=None, turn=None, subtask=None):
        d = {"task": task}
        if subtask:
            d["subtask"] = subtask
        if turn:
            d["turn"] = turn
        if not think:
            d["think"] = False
        if history is not None:
            d["history"] = history
        d["prompt"], d["reference"] = ex["prompt"], ex["reference"] if think else ex.get("direct", ex["reference"])
        if ex["task"] in META:
            d["accept"] = accepted(ex["task"], ex["kind"])
        elif d["reference"] != ex["reference"]:
            d["accept"] = [ex["reference"]]     # the bare answer is right too
        if think:
            d["reasoning"] = ex["reasoning"]
        return d

    for name, think in (("multi_turn", True), ("multi_turn_no_think", False)):
        for task in TASKS:
            for j in range(N_NEW[name]):
                turn = 2 + j % 3
                hist = [fresh(rng.choice(TASKS)) for _ in range(turn - 1)]
                ex = fresh(task)
                out.append(item(name, ex, think, history_messages(hist, think), turn, task))
    for task in TASKS:
        for _ in range(N_NEW["no_think"]):
            out.append(item("no_think", fresh(task), False, subtask=task))
    for fam in META:
        for _ in range(N_META[fam]):
            ex = fresh(fam)
            out.append(item(fam, ex, subtask=ex["kind"]))
        for prompt, kind in FREE[fam]:
            assert prompt not in taken
            taken.add(prompt)
            ex = {"task": fam, "kind": kind, "prompt": prompt, "reference": REPLY["hello"] % "Hello"
                  if kind == "hello" else REPLY[kind] if fam != "out_of_scope" else OOS_HEAD[kind] + OOS_TAIL,
                  "reasoning": (REASON[kind] if fam != "out_of_scope" else OOS_REASON % OOS_WHAT[kind])}
            out.append(item(fam, ex, subtask="free"))
    return out


N_TOOL = {"tool_call": 24, "tool_call_no_think": 12, "tool_answer": 16, "tool_answer_no_think": 8,
          "tool_no_call": 20, "tools_no_calculator": 10}


def heldout_tools(seed, taken):
    """The items added for tool use (issue #27), each with its "tools" array: tool_call
    (the calculator declared alone or among others, an arithmetic question: scored is the
    call, "call", which must follow an empty response exactly as the server parses it),
    tool_answer (the call and the calculator's result follow the question, "after":
    scored is the answer from the result), tool_no_call (the calculator declared, any
    other question: answered as without tools, no call), tools_no_calculator (other tools
    only, an arithmetic question: answered as without tools).  Halves with the calculator
    alone and among other tools (subtask)."""
    rng = random.Random(seed)
    out = []

    def fresh(make):
        while True:
            ex = make()
            norm = ex["prompt"].lower().rstrip("?!. ")
            if ex["prompt"] not in taken and norm not in CANON:
                taken.add(ex["prompt"])
                return ex

    def arith():
        return fresh(lambda: t_calc(rng) if rng.random() < 0.5 else make_example(rng, rng.choice(ARITH)))

    for name, n in N_TOOL.items():
        for j in range(n):
            think = not name.endswith("no_think") and (name != "tool_no_call" or j % 5 < 3)
            alone = j % 2 == 0 and name != "tools_no_calculator"
            tools = [calculator_tool(rng)] if alone else make_tools(rng, name != "tools_no_calculator", 1)
            d = {"task": name, "subtask": "alone" if alone else "among", "tools": tools}
            if not think:
                d["think"] = False
            if name.startswith("tool_call"):
                ex = arith()
                d["prompt"], d["reference"] = ex["prompt"], ""
                d["call"] = calc_call(ex["expr"])
                if think:
                    d["reasoning"] = CALL_REASON % ex["expr"]
            elif name.startswith("tool_answer"):
                ex = arith()
                rnd = tool_round(rng, ex, think)
                d["prompt"], d["after"], d["reference"] = ex["prompt"], rnd[1:3], rnd[3]["content"]
                if think:
                    d["reasoning"] = rnd[3]["reasoning_content"]
            else:
                ex = fresh(lambda: make_turn(rng, 0) if name == "tool_no_call" else make_example(rng, rng.choice(ARITH)))
                if name == "tool_no_call":
                    d["subtask"] = ex["task"]
                while name == "tool_no_call" and ex["task"] in ARITH:
                    ex = fresh(lambda: make_turn(rng, 0))
                    d["subtask"] = ex["task"]
                m = answer_message(ex, think)
                d["prompt"], d["reference"] = ex["prompt"], m["content"]
                if think:
                    d["reasoning"] = ex["reasoning"]
                if ex["task"] in META:
                    d["accept"] = accepted(ex["task"], ex["kind"])
                elif m["content"] != ex["reference"]:
                    d["accept"] = [ex["reference"]]
            out.append(d)
    return out


def all_prompts(items):
    """Every user prompt of held-out items (scored and history): training skips them."""
    s = set()
    for it in items:
        s.add(it["prompt"])
        for m in it.get("history", []):
            if m["role"] == "user":
                s.add(m["content"])
    return s


def check(n, seed, mix, heldout_files, tokdir=None):
    """Generate n training conversations of `mix` with the held-out prompts excluded, as
    train.py does; fail (exit 1) when a user prompt is a held-out prompt, or when a meta
    prompt equals a hand-written held-out prompt (FREE) up to case, spaces and
    punctuation; print the mix's make-up (and with tokdir its token counts)."""
    items = [json.loads(line) for fn in heldout_files for line in open(fn)]
    exclude = all_prompts(items)
    norm_all = {norm_prompt(p) for p in exclude}
    norm_free = {norm_prompt(p) for fam in FREE for p, _ in FREE[fam]}
    seen = []                   # every answered example, through answer_message and tool_round
    g = globals()
    orig_answer, orig_round = g["answer_message"], g["tool_round"]

    def answer_rec(ex, thinking, bare=False):
        seen.append((ex, thinking))
        return orig_answer(ex, thinking, bare)

    def round_rec(rng, ex, thinking, k=1):
        seen.append((dict(ex, task="tool:" + ex["task"]), thinking))
        return orig_round(rng, ex, thinking, k)

    g["answer_message"], g["tool_round"] = answer_rec, round_rec
    rng = random.Random(seed)
    convs = [conversation_messages(rng, exclude, mix) for _ in range(n)]
    g["answer_message"], g["tool_round"] = orig_answer, orig_round
    bad, near_free, near_any = [], set(), set()
    setting = {}
    for msgs, tools, thinking in convs:
        users = [m["content"] for m in msgs if m["role"] == "user"]
        bad += [u for u in users if u in exclude]
        asst = [m for m in msgs if m["role"] == "assistant" and not m.get("tool_calls")]
        mixed = thinking and any(not m.get("reasoning_content") for m in asst)
        key = "%s%s, %s turns" % ("tools, " if tools else "", "mixed" if mixed else "on" if thinking else "off",
                                  len(users) if len(users) < 2 else "2-4")
        setting[key] = setting.get(key, 0) + 1
    per, meta_prompts = {}, {}
    for ex, thinking in seen:
        name = ex["task"] + ("/" + ex["kind"] if "kind" in ex else "")
        if ex["task"] == "mul" and "*" in ex.get("expr", "") and min(map(len, ex["expr"].split("*"))) == 2:
            name = "mul/2x2"
        d = per.setdefault(name, [0, 0])
        d[0 if thinking else 1] += 1
        if ex["task"] in META:
            meta_prompts.setdefault(name, set()).add(ex["prompt"])
            if norm_prompt(ex["prompt"]) in norm_free:
                near_free.add(ex["prompt"])
            if norm_prompt(ex["prompt"]) in norm_all:
                near_any.add(ex["prompt"])
    print("%d conversations of mix %s (seed %d), %d held-out prompts excluded" % (n, mix, seed, len(exclude)))
    for k in sorted(setting):
        print("  %-28s %6.2f %%" % (k, 100.0 * setting[k] / n))
    print("answered turns by task (thinking on / off):")
    for k in sorted(per):
        extra = " (%d distinct prompts)" % len(meta_prompts[k]) if k in meta_prompts else ""
        print("  %-28s %6d %6d%s" % (k, per[k][0], per[k][1], extra))
    if tokdir:
        import tokenizer as tk
        tok = tk.Tokenizer.load(tokdir)
        lens, tgt = [], 0
        for msgs, tools, thinking in convs:
            ids, t = tk.encode_training_messages(tok, msgs, thinking, tools)
            lens.append(len(ids))
            tgt += sum(t)
        print("tokens: %.1f mean, %d max, %.1f %% target" % (sum(lens) / n, max(lens), 100.0 * tgt / sum(lens)))
    print("meta prompts equal to a held-out prompt up to case and punctuation: %d (hand-written ones: %d)%s" % (
        len(near_any), len(near_free), ": " + "; ".join(sorted(near_any)[:8]) if near_any else ""))
    print("user prompts identical to a held-out prompt: %d" % len(bad))
    ok = not bad and not near_free
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["heldout", "sample", "conv", "check"])
    ap.add_argument("arg")
    ap.add_argument("--n-per-task", type=int, default=25)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--tools-out", default=None, help="heldout: also write the tool items to this file")
    ap.add_argument("--mix", choices=MIXES, default="base", help="conv, check: the training mix")
    ap.add_argument("--heldout", nargs="+", default=[os.path.join(HERE, "../eval/heldout.jsonl"),
                                                     os.path.join(HERE, "../eval/heldout_tools.jsonl")],
                    help="check: the held-out files whose prompts training skips")
    ap.add_argument("--tok", default=None, help="check: also count tokens with this tokenizer directory")
    a = ap.parse_args()
    if a.cmd == "heldout":
        old = heldout(a.n_per_task, a.seed)
        taken = set(ex["prompt"] for ex in old)
        with open(a.arg, "w") as f:
            for ex in old:
                f.write(json.dumps({"task": ex["task"], "prompt": ex["prompt"],
                                    "reference": ex["reference"], "reasoning": ex["reasoning"]}) + "\n")
            for d in heldout_new(a.seed + 1, taken):
                f.write(json.dumps(d) + "\n")
        if a.tools_out:     # a file of its own: remora eval has no tools, so it reads only the first
            with open(a.tools_out, "w") as f:
                for d in heldout_tools(a.seed + 2, taken):
                    f.write(json.dumps(d) + "\n")
    elif a.cmd == "sample":
        rng = random.Random(a.seed)
        for _ in range(int(a.arg)):
            print(json.dumps(make_turn(rng, 0)))
    elif a.cmd == "check":
        return check(int(a.arg), a.seed, a.mix, a.heldout, a.tok)
    else:
        rng = random.Random(a.seed)
        for _ in range(int(a.arg)):
            msgs, tools, thinking = conversation_messages(rng, (), a.mix)
            print(json.dumps({"thinking": thinking, "tools": tools, "messages": msgs}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
