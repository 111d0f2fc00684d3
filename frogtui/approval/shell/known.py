"""What the read-only default knows, failing closed: for each program it may allow, the options it
knows to only change what is printed. An option it does not know, or a word whose value is only
known when the command runs in a place where it may be an option (``rg "$OPTS" x``, an unquoted
``$(...)`` that bash splits into ``--pre=rm``), makes the command not read-only (it is then
decided by the rules, and asked about by default). The effect model (``programs``, ``special``) still
says what the known options read, write and run; this only keeps the read-only default from
allowing what it has not been told about. Pure.

``KNOWN[name]`` is a ``Known``; a program without an entry is never read-only by default.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from frogtui.approval.shell.words import Word

ANY = frozenset({"*"})
"""Every option is harmless (``echo``, ``true``)."""


@dataclass(frozen=True)
class Known:
    """The options of one program that the read-only default knows.

    Attributes:
        flags: Options without a value (``-l``, ``--all``), or ``ANY``.
        values: Options that take a value (the next word, ``-nVALUE`` or ``--long=VALUE``).
        options_first: Options come only before the first operand (builtins, POSIX style); GNU
            programs take them anywhere before ``--``.
        dynamic: A word only known when it runs may stand where an option could (``echo $X``).
    """

    flags: frozenset[str] = frozenset()
    values: frozenset[str] = frozenset()
    options_first: bool = False
    dynamic: bool = False


def _opts(short: str = "", long: str = "") -> frozenset[str]:
    return frozenset({f"-{c}" for c in short} | {f"--{w}" for w in long.split()})


DIGITS = "0123456789"
HARMLESS = Known(ANY, dynamic=True)
"""Prints its words or nothing; any word, any option."""

KNOWN: dict[str, Known] = {
    **dict.fromkeys(("echo", "true", "false", "pwd", "cd", "pushd", "popd", "dirs", "seq", "sleep", "basename", "dirname", "expr",
                     "nproc", "uptime", "tty", "groups", "whoami", "locale", "cal", "printenv"), HARMLESS),
    "tr": Known(_opts("cdstC", "complement delete squeeze-repeats truncate-set1"), dynamic=True),
    "test": Known(ANY),  # its operators look like options; a word only known at run time may be ``-v 'a[$(cmd)]'``
    "[": Known(ANY),
    "type": Known(_opts("afptP"), options_first=True),
    "command": Known(_opts("pvV"), options_first=True),
    "which": Known(_opts("as", "all skip-alias skip-functions read-alias read-functions")),
    "id": Known(_opts("agGnruzZ", "group groups name real user zero context")),
    "uname": Known(_opts("asnrvmpio", "all kernel-name nodename kernel-release kernel-version machine processor hardware-platform "
                               "operating-system")),
    "printf": Known(frozenset(), _opts("v"), options_first=True),
    "ls": Known(
        _opts("aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1", "all almost-all author escape ignore-backups color colour directory classify "
              "file-type full-time group-directories-first no-group human-readable si dereference-command-line "
              "dereference-command-line-symlink-to-dir inode kibibytes dereference numeric-uid-gid literal hide-control-chars "
              "show-control-chars quote-name reverse recursive size zero context hyperlink"),
        _opts("ITw", "block-size format hide ignore indicator-style quoting-style sort time time-style tabsize width"),
    ),
    "stat": Known(_opts("LftZ", "dereference file-system terse"), _opts("c", "format printf cached")),
    "readlink": Known(_opts("femnqsvz", "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero")),
    "realpath": Known(_opts("emLPqsz", "canonicalize-existing canonicalize-missing logical physical quiet strip no-symlinks zero"),
                      _opts("", "relative-to relative-base")),
    "du": Known(_opts("abcDhHklLmPsSxz0", "all apparent-size bytes total dereference-args human-readable dereference no-dereference "
                               "separate-dirs summarize one-file-system si null count-links inodes"),
                _opts("dBtX", "max-depth block-size threshold exclude time time-style")),
    "df": Known(_opts("ahHiklPTx", "all human-readable si inodes local portability print-type total sync no-sync"),
                _opts("BtxF", "block-size type exclude-type output")),
    "date": Known(_opts("uRI", "utc universal rfc-email iso-8601 rfc-3339 debug"), _opts("d", "date"), options_first=False),
    "cat": Known(_opts("AbeEnstTuv", "show-all number-nonblank number squeeze-blank show-ends show-tabs show-nonprinting")),
    "head": Known(_opts("qvz" + DIGITS, "quiet silent verbose zero-terminated"), _opts("nc", "lines bytes")),
    "tail": Known(_opts("fFqvz" + DIGITS, "follow retry quiet silent verbose zero-terminated"), _opts("ncs", "lines bytes sleep-interval pid")),
    "wc": Known(_opts("lwcmL", "lines words bytes chars max-line-length"), _opts("", "total")),
    "nl": Known(_opts("p", "no-renumber"), _opts("bdfhilnsvw", "body-numbering section-delimiter footer-numbering header-numbering "
                                            "line-increment join-blank-lines number-format number-separator starting-line-number "
                                            "number-width")),
    "tac": Known(_opts("br", "before regex"), _opts("s", "separator")),
    "od": Known(_opts("bcdfiloxsv", "output-duplicates traditional"), _opts("AjNtwS", "address-radix skip-bytes read-bytes format width strings endian")),
    "hexdump": Known(_opts("bcCdovx", "canonical no-squeezing"), _opts("ens", "format length skip")),
    "xxd": Known(_opts("aCbEeiprud" + "u", "autoskip capitalize bits include postscript plain ps revert"), _opts("cgloOsnR", "cols groupsize len name")),
    "strings": Known(_opts("adfw", "all data print-file-name include-all-whitespace"), _opts("ntesT", "bytes radix encoding output-separator")),
    **dict.fromkeys(("md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum"),
                    Known(_opts("btz", "binary text tag zero"), _opts("l", "length"))),
    "cksum": Known(_opts("z", "untagged base64 raw tag zero"), _opts("al", "algorithm length")),
    "cut": Known(_opts("nsz", "complement only-delimited zero-terminated"), _opts("bcdf", "bytes characters delimiter fields output-delimiter")),
    "paste": Known(_opts("sz", "serial zero-terminated"), _opts("d", "delimiters")),
    "join": Known(_opts("iz", "ignore-case check-order nocheck-order header zero-terminated"), _opts("12ajeotv")),
    "comm": Known(_opts("123z", "check-order nocheck-order total zero-terminated"), _opts("", "output-delimiter")),
    "fold": Known(_opts("bs", "bytes spaces"), _opts("w", "width")),
    "fmt": Known(_opts("csut", "crown-margin split-only uniform-spacing tagged-paragraph"), _opts("pwg", "prefix width goal")),
    "column": Known(_opts("etxnJRL", "table fillrows keep-empty-lines json"), _opts("cosNHWdrCi", "columns output-separator separator "
                                                                                  "table-columns table-name output-width")),
    "rev": Known(frozenset()),
    "expand": Known(_opts("i" + DIGITS, "initial"), _opts("t", "tabs")),
    "unexpand": Known(_opts("a" + DIGITS, "all first-only"), _opts("t", "tabs")),
    "cmp": Known(_opts("blsz", "print-bytes verbose quiet silent"), _opts("in", "ignore-initial bytes")),
    "iconv": Known(_opts("cls", "list silent"), _opts("ft", "from-code to-code")),
    **dict.fromkeys(("grep", "egrep", "fgrep"), Known(
        _opts("EFGPiyvwxcLloqsbHhnTZzaIUrR" + DIGITS, "extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case "
              "invert-match word-regexp line-regexp count files-with-matches files-without-match only-matching quiet silent "
              "no-messages byte-offset with-filename no-filename line-number initial-tab null null-data text recursive "
              "dereference-recursive line-buffered color colour"),
        _opts("efmABCdD", "regexp file max-count after-context before-context context directories devices include exclude "
              "exclude-dir label binary-files color colour"),
    )),
    "rg": Known(
        _opts("aiIjlLnNopqsSuvwxcFHhU0" + DIGITS, "text ignore-case smart-case case-sensitive files-with-matches files-without-match "
              "line-number no-line-number only-matching pretty quiet no-messages unrestricted invert-match word-regexp line-regexp "
              "count count-matches fixed-strings with-filename no-filename multiline multiline-dotall null hidden no-hidden no-ignore "
              "no-ignore-vcs no-ignore-dot no-ignore-global no-ignore-parent no-ignore-exclude no-ignore-files no-config follow "
              "no-follow files json vimgrep column no-column heading no-heading stats trim passthru one-file-system binary "
              "no-binary type-list crlf no-unicode byte-offset block-buffered line-buffered sort-files no-require-git debug"),
        _opts("efgmMtTABCjrEd", "regexp file glob iglob max-count max-columns type type-not after-context before-context context threads "
              "replace sort sortr max-depth max-filesize color colors encoding engine type-add context-separator field-match-separator "
              "field-context-separator path-separator"),
    ),
    "diff": Known(
        _opts("abBcdEiNpqrsStTuwyZ" + DIGITS, "text ignore-space-change ignore-blank-lines context minimal ignore-tab-expansion "
              "ignore-case new-file show-c-function brief recursive report-identical-files expand-tabs initial-tab unified "
              "ignore-all-space side-by-side ignore-trailing-space suppress-common-lines left-column strip-trailing-cr "
              "speed-large-files no-dereference unidirectional-new-file"),
        _opts("CUxWIFL", "exclude width ignore-matching-lines show-function-line label color palette from-file to-file line-format "
              "old-line-format new-line-format unchanged-line-format old-group-format new-group-format changed-group-format "
              "unchanged-group-format horizon-lines tabsize"),
    ),
    "sort": Known(_opts("bcCdfghiMnrRsuVz", "ignore-leading-blanks check dictionary-order ignore-case general-numeric-sort "
                                          "human-numeric-sort ignore-nonprinting month-sort numeric-sort random-sort reverse stable "
                                          "unique version-sort zero-terminated debug"),
                  _opts("ktS", "key field-separator buffer-size parallel sort")),
    "uniq": Known(_opts("cdDiuz", "count repeated all-repeated ignore-case unique zero-terminated"),
                  _opts("fsw", "skip-fields skip-chars check-chars group")),
    **dict.fromkeys(("base64", "base32", "basenc"), Known(_opts("di", "decode ignore-garbage base64 base64url base32 base32hex base16 "
                                                                "base2msbf base2lsbf z85"), _opts("w", "wrap"))),
    "jq": Known(_opts("rcnsejaSCMRj", "raw-output compact-output null-input slurp exit-status join-output ascii-output sort-keys "
                                    "color-output monochrome-output raw-input tab seq stream stream-errors args jsonargs raw-output0"),
                _opts("", "indent"), dynamic=False),
    "tree": Known(_opts("adflxsShDFCnpuginrtvU", "noreport dirsfirst du si inodes device prune filesfirst charset"), _opts("LPI", "filelimit")),
    "file": Known(_opts("bcEhiklLNnrs0", "brief checking-printout dereference no-dereference keep-going list mime mime-type mime-encoding "
                                      "no-buffer no-pad raw special-files print0 extension apple"), _opts("eFP", "exclude exclude-quiet separator parameter")),
    "less": Known(_opts("NnRrSsXFiIJKMmQqw", "LINE-NUMBERS line-numbers RAW-CONTROL-CHARS raw-control-chars chop-long-lines "
                                          "squeeze-blank-lines no-init quit-if-one-screen ignore-case IGNORE-CASE quiet silent"),
                  _opts("hjPxyz", "tabs")),
    "more": Known(_opts("dlfpcsu", "silent logical no-pause print-over clean-print squeeze plain"), _opts("n", "lines")),
    "sed": Known(_opts("nErsuz", "quiet silent regexp-extended separate unbuffered null-data posix debug sandbox"),
                 _opts("el", "expression line-length")),
    "awk": Known(frozenset(), _opts("Fv", "field-separator assign")),
    "export": Known(_opts("fnp"), options_first=True),
    "declare": Known(_opts("aAfFgprxtlu"), options_first=True),  # not -i (arithmetic) or -n (a name reference)
    "typeset": Known(_opts("aAfFgprxtlu"), options_first=True),
    "local": Known(_opts("aAfFprxtlu"), options_first=True),
    "readonly": Known(_opts("aAfp"), options_first=True),
    "read": Known(_opts("ers"), _opts("adnNptu"), options_first=True),
    "mapfile": Known(_opts("t"), _opts("dnsu"), options_first=True),  # not -C (a callback: code) or -O
    "readarray": Known(_opts("t"), _opts("dnsu"), options_first=True),
    "unset": Known(_opts("fv"), options_first=True),
    "find": Known(ANY),  # find's primaries are checked by its analyser; only a word known at run time is refused here
    "git": Known(ANY),  # git's options are checked by shell_git
    "tar": Known(ANY),  # tar's options are checked by its analyser
}
for _awk in ("gawk", "mawk", "nawk", "busybox-awk"):
    KNOWN[_awk] = KNOWN["awk"]


SETS_VARIABLES = frozenset({"export", "declare", "typeset", "local", "readonly", "read", "mapfile", "readarray", "unset"})


def unknown_option(name: str, args: Sequence[Word]) -> str | None:
    """Why ``name ARGS`` is not something the read-only default knows (None when it is): no entry
    for the program, an option it does not know, or a word only known when it runs where an
    option could be."""
    known = KNOWN.get(name)
    if known is None:
        return f"the read-only default does not know {name}"
    if name in SETS_VARIABLES and any("[" in w.text for w in args):
        return f"{name}: a subscript is evaluated as arithmetic, which runs the commands a value holds"
    n = 0
    while n < len(args):
        word = args[n]
        text = word.text
        if text == "--" and known.flags is not ANY:
            return None
        if word.dynamic:
            if known.dynamic:
                n += 1
                continue
            return f"{name}: {text} is only known when it runs and may be an option"
        if known.flags is ANY or text == "-" or not text.startswith("-"):
            if known.options_first and known.flags is not ANY:
                return None  # the first operand: every word after it is an operand
            n += 1
            continue
        if text.startswith("--"):
            option = text.split("=", 1)[0]
            if option in known.values:
                if "=" not in text and _split_value(args, n):
                    return f"{name}: the value of {option} is only known when it runs and may split into options"
                n += 1 if "=" in text else 2
                continue
            if option not in known.flags:
                return f"{name}: the read-only default does not know {option}"
            n += 1
            continue
        for at, letter in enumerate(text[1:], start=1):
            option = f"-{letter}"
            if option in known.values:
                if at == len(text) - 1 and _split_value(args, n):
                    return f"{name}: the value of {option} is only known when it runs and may split into options"
                n += 1 if at < len(text) - 1 else 2
                break
            if option not in known.flags:
                return f"{name}: the read-only default does not know {option}"
        else:
            n += 1
    return None


def _split_value(args: Sequence[Word], n: int) -> bool:
    """Whether the value after ``args[n]`` is only known when it runs (unquoted, it splits)."""
    return n + 1 < len(args) and args[n + 1].dynamic


# git -----------------------------------------------------------------------------------------
_GIT_DIFF = (
    "p u s patch no-patch stat numstat shortstat dirstat summary name-only name-status raw patch-with-stat patch-with-raw "
    "full-index binary abbrev no-abbrev color no-color color-moved color-words word-diff word-diff-regex minimal patience "
    "histogram anchored diff-algorithm ignore-all-space ignore-space-change ignore-space-at-eol ignore-blank-lines "
    "ignore-cr-at-eol ignore-submodules indent-heuristic no-indent-heuristic find-renames find-copies find-copies-harder "
    "no-renames rename-empty irreversible-delete text a R relative no-relative unified inter-hunk-context function-context "
    "W w b M C D B l diff-filter src-prefix dst-prefix no-prefix default-prefix line-prefix ita-invisible-in-index "
    "exit-code quiet check cached staged merge-base compact-summary stat-width stat-name-width stat-count stat-graph-width "
    "submodule ws-error-highlight color-moved-ws no-color-moved output-indicator-new output-indicator-old "
    "output-indicator-context z U"
)
_GIT_LOG = (
    "oneline graph all decorate no-decorate decorate-refs decorate-refs-exclude n max-count skip since after until before "
    "author committer grep all-match invert-grep i regexp-ignore-case E extended-regexp F fixed-strings P perl-regexp "
    "merges no-merges min-parents max-parents first-parent not branches tags remotes glob exclude reflog "
    "walk-reflogs g left-right cherry-pick cherry-mark cherry ancestry-path simplify-by-decoration full-history dense sparse "
    "simplify-merges topo-order date-order author-date-order reverse follow pretty format abbrev-commit no-abbrev-commit "
    "encoding expand-tabs no-expand-tabs notes no-notes show-notes relative-date date parents children left-only right-only "
    "boundary source log-size mailmap use-mailmap no-mailmap full-diff S G pickaxe-all pickaxe-regex m c cc dd t r root "
    "no-walk do-walk show-pulls remerge-diff diff-merges combined-all-paths no-merges mailmap L count"
)
_GIT_SUB = {
    "status": "s short b branch porcelain long v verbose u untracked-files ignored z column no-column ahead-behind "
              "no-ahead-behind renames no-renames find-renames show-stash",
    "diff": _GIT_DIFF,
    "diff-tree": _GIT_DIFF + " r t root stdin m c cc",
    "diff-files": _GIT_DIFF,
    "diff-index": _GIT_DIFF,
    "log": _GIT_DIFF + " " + _GIT_LOG,
    "whatchanged": _GIT_DIFF + " " + _GIT_LOG,
    "show": _GIT_DIFF + " " + _GIT_LOG,
    "shortlog": "s n e summary numbered email c committer w group format " + _GIT_LOG,
    "rev-list": _GIT_LOG + " count objects objects-edge all header timestamp",
    "rev-parse": "abbrev-ref short verify q quiet show-toplevel show-prefix show-cdup git-dir git-common-dir absolute-git-dir "
                 "is-inside-work-tree is-inside-git-dir is-bare-repository is-shallow-repository symbolic symbolic-full-name "
                 "all branches tags remotes show-superproject-working-tree local-env-vars default revs-only no-revs flags "
                 "no-flags sq not git-path show-object-format shared-index-path since after until before path-format",
    "ls-files": "c cached d deleted m modified o others i ignored s stage u unmerged k killed z t v f exclude-standard "
                "directory no-empty-directory error-unmatch full-name recurse-submodules abbrev debug eol deduplicate format "
                "sparse x exclude",
    "ls-tree": "d r t l long z name-only name-status object-only full-name full-tree abbrev format",
    "blame": "b root show-stats l t s f show-name n show-number e show-email w c p porcelain line-porcelain incremental "
             "M C L since reverse first-parent date progress no-progress abbrev color-lines color-by-age score-debug",
    "annotate": "b root show-stats l t s f show-name n show-number e show-email w c p porcelain line-porcelain incremental "
                "M C L since reverse first-parent date abbrev",
    "grep": "cached untracked no-index no-exclude-standard exclude-standard recurse-submodules a text textconv no-textconv "
            "i ignore-case I max-depth r recursive no-recursive w word-regexp v invert-match h H full-name E extended-regexp "
            "G basic-regexp P perl-regexp F fixed-strings n line-number column l files-with-matches name-only L "
            "files-without-match null z o only-matching c count color no-color break heading p show-function "
            "C context A after-context B before-context W function-context m max-count threads e and or not all-match q quiet",
    "describe": "all tags contains abbrev candidates exact-match debug long match exclude always first-parent dirty broken",
    "cat-file": "t s e p batch-check batch batch-all-objects buffer unordered follow-symlinks allow-unknown-type",
    "count-objects": "v verbose H human-readable",
    "name-rev": "tags refs exclude all name-only no-undefined always annotate-stdin",
    "merge-base": "a all octopus independent is-ancestor fork-point",
    "show-ref": "head heads tags branches d dereference s hash abbrev verify q quiet exists",
    "for-each-ref": "count sort format color shell perl python tcl points-at merged no-merged contains no-contains "
                    "ignore-case omit-empty exclude include-root-refs",
    "var": "l",
    "version": "build-options",
    "show-branch": "r remotes a all current topo-order date-order sparse more list merge-base independent no-name sha1-name "
                   "topics g reflog color no-color",
    "check-ignore": "q quiet v verbose n non-matching no-index z",
    "check-attr": "a all cached z source",
}
_GIT_VALUES = frozenset(
    {f"--{w}" for w in "max-count skip since after until before author committer grep format date encoding decorate-refs "
     "decorate-refs-exclude diff-filter src-prefix dst-prefix line-prefix unified inter-hunk-context diff-algorithm "
     "word-diff-regex stat-width stat-name-width stat-count stat-graph-width max-depth threads context after-context "
     "before-context sort points-at match exclude candidates group ws-error-highlight color-moved-ws diff-merges "
     "path-format output-indicator-new output-indicator-old output-indicator-context".split()} | {f"-{c}" for c in "nUeABCLSGgm"}
)
"""git options that need a value (``-n 5``, ``--format X``); one whose value is optional takes it only
after ``=`` (``--abbrev=7``), and ``--opt=value`` is one word anyway."""


def git_unknown_option(sub: str, rest: Sequence[Word]) -> str | None:
    """Why ``git SUB REST`` is not something the read-only default knows: an option not in its
    list for the subcommand (``git blame --contents F``, ``git log --show-signature`` runs gpg),
    None when every option is known."""
    names = _GIT_SUB.get(sub)
    if names is None:
        return f"the read-only default does not know git {sub}"
    known = {f"--{w}" if len(w) > 1 else f"-{w}" for w in names.split()} | {f"--no-{w}" for w in names.split() if len(w) > 1}
    n = 0
    while n < len(rest):
        text = rest[n].text
        if text == "--":
            return None
        if not text.startswith("-") or text == "-" or re.fullmatch(r"-\d+", text):
            n += 1
            continue
        option = text.split("=", 1)[0]
        if option.startswith("--"):
            if option not in known:
                return f"git {sub}: the read-only default does not know {option}"
            n += 2 if option in _GIT_VALUES and "=" not in text else 1
            continue
        for at, letter in enumerate(text[1:], start=1):
            if f"-{letter}" not in known:
                return f"git {sub}: the read-only default does not know -{letter}"
            if f"-{letter}" in _GIT_VALUES:
                n += 1 if at < len(text) - 1 else 2
                break
        else:
            n += 1
    return None
