"""Seeded synthetic task mix for the embedded demonstration model.  Every example is a
question (user message), a short step-by-step reasoning (think channel) and a checkable
answer (response channel).  Tasks: add, sub, mul (multi-digit, column method), count_letter,
count_items, sort_numbers, sort_words, unit_convert, date_add, date_diff, reverse,
uppercase, nth_letter, word_problem.

usage:
  python3 gen_data.py heldout OUT.jsonl [--n-per-task 25] [--seed 7]
      writes the held-out evaluation file ({"task", "prompt", "reference", "reasoning"}).
  python3 gen_data.py sample N [--seed S]   prints N examples.
Training draws examples with make_example(rng) and skips any question in the held-out file.
"""
import argparse
import datetime
import json
import random

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


# ----------------------------------------------------------------------------- tasks

def t_add(rng):
    a, b = digits(rng, 1, 4), digits(rng, 1, 4)
    q = rng.choice(["What is %d+%d?", "What is %d + %d?", "Compute %d + %d.", "Calculate %d plus %d."]) % (a, b)
    st, r = add_steps(a, b)
    return q, "Add the digits from right to left. %s So %d+%d=%d." % (" ".join(st), a, b, r), str(r)


def t_sub(rng):
    a, b = digits(rng, 1, 4), digits(rng, 1, 4)
    if a < b:
        a, b = b, a
    q = rng.choice(["What is %d-%d?", "What is %d - %d?", "Compute %d - %d.", "Calculate %d minus %d."]) % (a, b)
    st, r, raw = sub_steps(a, b)
    tail = "The digits read %s, so %d-%d=%d." % (raw, a, b, r)
    return q, "Subtract the digits from right to left. %s %s" % (" ".join(st), tail), str(r)


def t_mul(rng):
    if rng.random() < 0.5:
        a, b = digits(rng, 1, 3), rng.randint(2, 9)
    else:
        a, b = digits(rng, 2, 2), digits(rng, 2, 2)
    q = rng.choice(["What is %d*%d?", "What is %d * %d?", "Compute %d * %d.", "Calculate %d times %d."]) % (a, b)
    txt, r = mul_reasoning(a, b)
    return q, txt, str(r)


def t_count_letter(rng):
    w = rng.choice(WORDS)
    c = rng.choice(w) if rng.random() < 0.8 else rng.choice("abcdefghijklmnopqrstuvwxyz")
    q = rng.choice(['How many times does the letter "%s" appear in "%s"?',
                    'Count the letter "%s" in the word "%s".']) % (c, w)
    n, steps = 0, []
    for ch in w:
        n += ch == c
        steps.append("%s %d" % (ch, n))
    return q, 'Go through "%s" and count "%s": %s. The count is %d.' % (w, c, ", ".join(steps), n), str(n)


def t_count_items(rng):
    items = rng.sample(WORDS, rng.randint(2, 12))
    q = rng.choice(["How many items are in this list: %s?", "Count the items: %s."]) % ", ".join(items)
    steps = ", ".join("%s %d" % (it, i + 1) for i, it in enumerate(items))
    return q, "Number the items: %s. There are %d items." % (steps, len(items)), str(len(items))


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
    while x > month_days(y, m):
        md = month_days(y, m)
        ny, nm = (y + 1, 1) if m == 12 else (y, m + 1)
        steps.append("%s %d has %d days, and %d is more than %d, so %d-%d=%d in %s %d." % (
            MONTHS[m - 1], y, md, x, md, x, md, x - md, MONTHS[nm - 1], ny))
        x, y, m = x - md, ny, nm
    res = "%04d-%02d-%02d" % (y, m, x)
    steps.append("The date is %s." % res)
    return q, " ".join(steps), res


def t_date_diff(rng):
    y, m = rng.choice(YEARS), rng.randint(1, 12)
    md = month_days(y, m)
    if rng.random() < 0.4:
        d1, d2 = sorted(rng.sample(range(1, md + 1), 2))
        y2, m2 = y, m
        txt = "Both dates are in %s %d. %d-%d=%d." % (MONTHS[m - 1], y, d2, d1, d2 - d1)
        r = d2 - d1
    else:
        d1 = rng.randint(1, md)
        y2, m2 = (y + 1, 1) if m == 12 else (y, m + 1)
        d2 = rng.randint(1, month_days(y2, m2))
        r = md - d1 + d2
        txt = ("%s %d has %d days. From day %d to the end of %s: %d-%d=%d. Then %d more days "
               "into %s. %d+%d=%d." % (MONTHS[m - 1], y, md, d1, MONTHS[m - 1], md, d1, md - d1,
                                         d2, MONTHS[m2 - 1], md - d1, d2, r))
    q = rng.choice(["How many days are there from %04d-%02d-%02d to %04d-%02d-%02d?",
                    "How many days pass between %04d-%02d-%02d and %04d-%02d-%02d?"]) % (y, m, d1, y2, m2, d2)
    return q, txt, str(r)


def t_reverse(rng):
    w = rng.choice(WORDS)
    q = rng.choice(['Reverse the word "%s".', 'Write "%s" backwards.']) % w
    return q, "Spell it: %s. Backwards: %s." % (" ".join(w), " ".join(w[::-1])), w[::-1]


def t_uppercase(rng):
    w = rng.choice(WORDS)
    q = rng.choice(['Write "%s" in capital letters.', 'Convert "%s" to uppercase.']) % w
    return q, "Spell it: %s. In capitals: %s." % (" ".join(w), " ".join(w.upper())), w.upper()


def t_nth_letter(rng):
    w = rng.choice(WORDS)
    n = rng.randint(1, len(w))
    q = rng.choice(['What is the %s letter of "%s"?', 'Which letter is %s in "%s"?']) % (ordinal(n), w)
    steps = ", ".join("%s %d" % (w[i], i + 1) for i in range(n))
    return q, "Count the letters: %s. The %s letter is %s." % (steps, ordinal(n), w[n - 1]), w[n - 1]


def t_word_problem(rng):
    name, thing = rng.choice(NAMES), rng.choice(THINGS)
    kind = rng.randint(0, 3)
    a, b = rng.randint(2, 50), rng.randint(2, 30)
    if kind == 0:
        q = "%s has %d %s and gets %d more. How many %s does %s have now?" % (name, a, thing, b, thing, name)
        r = a + b
        txt = "%s starts with %d and gets %d more. %d+%d=%d." % (name, a, b, a, b, r)
    elif kind == 1:
        a, b = max(a, b), min(a, b)
        q = "%s had %d %s and gave away %d. How many %s are left?" % (name, a, thing, b, thing)
        r = a - b
        txt = "%s starts with %d and gives away %d. %d-%d=%d." % (name, a, b, a, b, r)
    elif kind == 2:
        a, b = rng.randint(2, 12), rng.randint(2, 9)
        q = "Each bag holds %d %s. How many %s are in %d bags?" % (a, thing, thing, b)
        st, r = mul1_steps(a, b)
        txt = "%d bags of %d each is %d*%d. %s So %d*%d=%d." % (b, a, a, b, " ".join(st), a, b, r)
    else:
        c = rng.randint(1, a + b - 1)
        q = "%s has %d %s, buys %d more, then gives %d to a friend. How many %s does %s have?" % (
            name, a, thing, b, c, thing, name)
        r = a + b - c
        txt = "%s starts with %d. After buying: %d+%d=%d. After giving: %d-%d=%d." % (
            name, a, a, b, a + b, a + b, c, r)
    return q, txt, str(r)


GEN = {name: globals()["t_" + name] for name in TASKS}


def make_example(rng, task=None):
    task = task or rng.choice(TASKS)
    q, reasoning, answer = GEN[task](rng)
    return {"task": task, "prompt": q, "reasoning": reasoning, "reference": answer}


def heldout(n_per_task, seed):
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["heldout", "sample"])
    ap.add_argument("arg")
    ap.add_argument("--n-per-task", type=int, default=25)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    if a.cmd == "heldout":
        with open(a.arg, "w") as f:
            for ex in heldout(a.n_per_task, a.seed):
                f.write(json.dumps({"task": ex["task"], "prompt": ex["prompt"],
                                    "reference": ex["reference"], "reasoning": ex["reasoning"]}) + "\n")
    else:
        rng = random.Random(a.seed)
        for _ in range(int(a.arg)):
            print(json.dumps(make_example(rng)))


if __name__ == "__main__":
    main()
