"""Docs that run: the fenced blocks of README.md and docs/*.md, as written.

A block's info string says what it is (its first word is the language that
GitHub highlights):

  sh            run, in order with the page's other runnable blocks, by
                `bash -e` in a scratch directory that stands for the
                repository root: ./build is the build tree (`xwires` on PATH
                is ./build/xwires), tests/, docs/ and scripts/ are the
                sources' own (and trainers/, for its profiles).
  python        run the same way by Debian's /usr/bin/python3 with
                PYTHONPATH=build/python.
  output        what the runnable block before it prints (stdout, then
                stderr): every line, its runs of spaces collapsed, must
                appear in that order (other lines may come between). `...`
                in a line matches any text; timings (a number before "s",
                "ms" or "img/s", an "ETA mm:ss") are not compared.
  sh synopsis   a usage with placeholders: not run, but every `xwires CMD`
  sh manual     it names must be a command whose `--help` lists each of the
                line's --options. `manual`: a real command that is run by
                hand (it installs, builds or benchmarks for minutes).
  text, json, python <word>, ...
                not run here (`python xwires`, `python torch`, ...: pages
                whose own tests run them, docs/python.md's).

A block with no info string is refused, so that every example says which of
these it is.
"""
import os
import re
import shlex
import subprocess
import sys

SOURCE_DIR = os.environ.get(
    "XWIRES_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BINARY_DIR = os.environ.get("XWIRES_BINARY_DIR", os.path.join(SOURCE_DIR, "build"))
XWIRES = os.path.join(BINARY_DIR, "xwires")


class Block:
    """One fenced block: its info words, its text and where it starts."""

    def __init__(self, info, text, line, heading):
        self.info = info.split()
        self.text = text
        self.line = line
        self.heading = heading

    @property
    def kind(self):
        return " ".join(self.info[:2]) if len(self.info) > 1 else (self.info or [""])[0]

    def runnable(self):
        return self.info in (["sh"], ["python"])

    def __repr__(self):
        return f"line {self.line} [{' '.join(self.info)}]"


def blocks(markdown):
    """Every fenced block of `markdown`, in order, with its section heading."""
    out, inside, heading = [], None, ""
    for n, line in enumerate(markdown.splitlines(), 1):
        if inside is None and line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.startswith("```"):
            if inside is None:
                inside = (line[3:].strip(), [], n)
            else:
                out.append(Block(inside[0], "\n".join(inside[1]) + "\n", inside[2], heading))
                inside = None
            continue
        if inside is not None:
            inside[1].append(line)
    assert inside is None, f"unclosed block at line {inside[2]}"
    return out


def section(markdown, heading):
    """The blocks under the `## heading` section (up to the next heading of
    the same or a higher level)."""
    lines = markdown.splitlines()
    start = level = None
    fenced = False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        m = None if fenced else re.match(r"(#+)\s+(.*)", line)
        if not m:
            continue
        if start is None and m.group(2).strip() == heading:
            start, level = i, len(m.group(1))
        elif start is not None and len(m.group(1)) <= level:
            return blocks("\n".join(lines[start:i]))
    assert start is not None, f"no section '{heading}'"
    return blocks("\n".join(lines[start:]))


def scratch_root(path):
    """Makes `path` stand for the repository root: build, tests, docs and
    scripts are links to the build tree and the sources."""
    os.makedirs(path, exist_ok=True)
    for name in ("build", "tests", "docs", "scripts", "trainers"):
        target = BINARY_DIR if name == "build" else os.path.join(SOURCE_DIR, name)
        link = os.path.join(path, name)
        if not os.path.lexists(link):
            os.symlink(os.path.abspath(target), link)
    return path


def run_block(block, cwd, timeout=600):
    """Runs a runnable block; returns its stdout + stderr (AssertionError
    naming the block if it fails)."""
    env = dict(os.environ, PATH=os.path.abspath(BINARY_DIR) + os.pathsep + os.environ["PATH"],
               PYTHONPATH=os.path.join(os.path.abspath(BINARY_DIR), "python"),
               PYTHONDONTWRITEBYTECODE="1")
    if block.info == ["sh"]:
        argv = ["bash", "-e", "-o", "pipefail", "-c", block.text]
    else:
        argv = ["/usr/bin/python3", "-c", block.text]
    r = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    out = r.stdout + r.stderr
    assert r.returncode == 0, f"{block} failed ({r.returncode}):\n{block.text}\n{out}"
    return out


_TIMING = [(re.compile(r"\d+(\.\d+)?\s?(ms|s|img/s)\b"), "<time>"),
           (re.compile(r"ETA \d+:\d\d"), "ETA <time>")]


def _norm(line):
    line = " ".join(line.split())
    for pattern, repl in _TIMING:
        line = pattern.sub(repl, line)
    return line


def check_output(expected, actual, where):
    """Every line of `expected` matches a line of `actual`, in order."""
    got = [_norm(line) for line in actual.splitlines()]
    i = 0
    for want in expected.splitlines():
        want = _norm(want)
        if not want or want == "...":
            continue
        pattern = re.compile(".*".join(re.escape(part) for part in want.split("...")))
        while i < len(got) and not pattern.fullmatch(got[i]):
            i += 1
        assert i < len(got), f"{where}: line not printed (in this order): {want!r}\n{actual}"
        i += 1


_HELP = {}


def _help(command):
    """(is it a command, its --help text): CLI11 answers an unknown command's
    --help with the top-level help, whose usage line does not name it."""
    if command not in _HELP:
        r = subprocess.run([XWIRES, *command, "--help"], capture_output=True, text=True)
        text = r.stdout + r.stderr
        usage = re.search(r"Usage: \S+((?: [a-z][a-z-]*)*)", text)
        named = tuple(usage.group(1).split()) if usage else ()
        _HELP[command] = (r.returncode == 0 and named == tuple(command), text)
    return _HELP[command]


def check_synopsis(block):
    """Every `xwires CMD [SUB] ... --opt` line names a real command and options."""
    text = block.text.replace("\\\n", " ")
    for line in text.splitlines():
        words = line.split("#")[0].split()
        if not words or os.path.basename(words[0]) != "xwires":
            continue
        command = tuple(w for w in words[1:3] if re.fullmatch(r"[a-z][a-z-]*", w))
        known, text_help = _help(command[:1])
        assert known, f"{block}: `xwires {command[0]}` is not a command"
        if len(command) > 1:
            known, sub_help = _help(command)
            if known:
                text_help = sub_help
        for opt in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", line):
            assert re.search(re.escape(opt) + r"\b", text_help), \
                f"{block}: `xwires {' '.join(command)}` has no option {opt}"


def run_page(blocks_, cwd):
    """Runs the runnable blocks of a page in order, checks its output blocks
    against them and its synopses against the CLI. Returns the outputs."""
    outputs, last = [], None
    for b in blocks_:
        assert b.info, f"{b}: a block needs an info string (docs_blocks.py)"
        if b.runnable():
            last = run_block(b, cwd)
            outputs.append(last)
        elif b.info == ["output"]:
            assert last is not None, f"{b}: no runnable block before this output"
            check_output(b.text, last, repr(b))
        elif b.info[0] == "sh" and b.info[1:] in (["synopsis"], ["manual"]):
            check_synopsis(b)
        else:
            assert b.info[0] != "sh", f"{b}: unknown kind of sh block (docs_blocks.py)"
    return outputs


if __name__ == "__main__":  # python3 docs_blocks.py PAGE.md: list its blocks
    for b in blocks(open(sys.argv[1]).read()):
        print(b, shlex.quote(b.text[:60]))
