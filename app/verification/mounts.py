"""What a run sees of the file system in bubblewrap's sandbox, and how its copy is made there.

Nothing of the host is there unless it is named below (never `/` with holes in it), all of it
read-only:

* the system's programs and libraries: `/usr`, `/bin`, `/sbin`, `/lib*` (a symlink, as on
  merged-`/usr` systems, is made the same symlink);
* of `/etc`, what programs need to run (:data:`ETC`): resolving users and names, locales
  and the time zone, TLS certificates, the dynamic linker's cache, Debian's alternatives;
* the directories the place names (:attr:`Place.read_only`: the checkout's environments, the
  installations they were made from, where the environments name them): nothing of
  Tiebreak's own Python;
* the tree the run's copy is made of, and the files written over it, at :data:`INSIDE`.

Its own, each a file system in memory of at most `disk_mb`, counted in the run's memory and
gone when it ends: what it writes over the tree (at :data:`LAYER`), the file system mounted
where its working directory's parent is (before what is shown: an installation below that
parent stays shown), `/tmp` and `/dev/shm`. Then `/proc` of its own PIDs and a minimal
`/dev`. So `/home`, `/root`, `/run`, `/var`, the host's `/tmp`, Tiebreak's data (the
snapshots of other repositories) and every Unix socket of the host are not there at all (but
an installation a project's environment was made from, below `/root` say); what
:attr:`Place.hidden` names is hidden even inside what is shown.

The copy may be seen anywhere but where its file system would cover what every run is shown
(:func:`shows_copy_at`): seen at the checkout's own path, it is what the project's environment
names there (an editable install, a script's `#!` line) leads to.

Where the sandbox starts as root, the run's working directory is the tree itself, read-only
underneath, with an overlay of its own above it (:func:`layered`, before the run drops to the
sandbox's user): what the run writes, changes or removes goes to its layer, never to the tree
other runs share, and nothing is copied, however large the tree. Where the overlay cannot be
mounted (bubblewrap without root), the run makes a copy instead. Then, as the sandbox's user
(:func:`launcher`): `cp -a` of the tree into its file system (without an overlay), the
additions over it, a symlink for each environment seen inside it (mounted at
:data:`INSIDE`), then the command. A copy, or a layer, that does not fit fails before the
command starts.
"""

import os
from pathlib import Path

from app.verification.runner import MB, Limits, Place

SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
ETC = (
    # Users and groups, and how they (and names) are resolved.
    "passwd",
    "group",
    "nsswitch.conf",
    # Host names and services: `localhost`, ports by name.
    "hosts",
    "host.conf",
    "gai.conf",
    "protocols",
    "services",
    # Locales and the time zone.
    "locale.alias",
    "locale.conf",
    "default/locale",
    "localtime",
    "timezone",
    # TLS certificates (Debian's, then Red Hat's).
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "pki",
    "crypto-policies",
    # The dynamic linker.
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    # Debian's alternatives, which commands in /usr/bin point through.
    "alternatives",
)
"""The entries of `/etc` a run sees (those the host has)."""
INSIDE = Path("/tiebreak")
"""Where the sandbox shows what the run's copy is made of."""
TREE = INSIDE / "tree"
ADDITIONS = INSIDE / "additions"
KEEP = INSIDE / "keep"
ENVIRONMENTS = INSIDE / "environments"
LAYER = INSIDE / "layer"
"""The run's own file system in memory, root's alone, holding what the run writes over the
tree (`upper`) and the overlay's own work (`work`)."""

OVERLAY = f"""\
work=$1
shift
if [ -d {TREE} ] && mkdir {LAYER}/upper {LAYER}/work \\
    && chown --reference={TREE} {LAYER}/upper && chmod --reference={TREE} {LAYER}/upper \\
    && mkdir "$work"; then
    mount -t overlay overlay -o lowerdir={TREE},upperdir={LAYER}/upper,workdir={LAYER}/work \\
        "$work" 2>/dev/null || rmdir "$work"
fi
exec "$@"
"""
"""Run by `/bin/sh -c` as the sandbox's root with the run's working directory, then the
command that drops to the sandbox's user: the tree shown there read-only with the run's layer
over it, owned as the tree is; or nothing, and the launcher copies the tree."""

LAUNCHER = f"""\
marker=$1 command=$2 work=$3 keep=$4
shift 4
# Only the overlay makes the working directory before this: without it, a copy.
if [ -d "$work" ]; then :
elif [ -d {TREE} ]; then cp -a -T {TREE} "$work"
else mkdir "$work"
fi || exit
if [ -d {ADDITIONS} ]; then cp -a -f -T {ADDITIONS} "$work" || exit; fi
while [ $# -gt 1 ]; do
    [ -e "$work/$1" ] || [ -h "$work/$1" ] || ln -s "$2" "$work/$1" || exit
    shift 2
done
cd "$work" || exit
printf '%s\\n' "$marker"
[ -n "$keep" ] || exec /bin/sh -c "$command"
/bin/sh -c "$command" || exit
exec cp -a -T "$work" {KEEP}
"""
"""Run by `/bin/sh -c` with the marker, the command, the copy's path, whether to keep it,
and then each environment's name in the copy and where it is mounted."""


def launcher(command: str, place: Place, marker: str) -> list[str]:
    """The argv that makes the run's copy, prints `marker`, then runs `command` there (and
    keeps the copy if it passed and the place asks)."""
    links = [str(part) for name, mounted in _linked(place) for part in (name, mounted)]
    keep = "yes" if place.keep is not None else ""
    return ["/bin/sh", "-c", LAUNCHER, "sh", marker, command, str(_work(place)), keep, *links]


def layered(place: Place) -> list[str]:
    """The argv that shows the run's tree with its own overlay over it before what follows
    runs (nothing without a tree: the run starts empty)."""
    return [] if place.tree is None else ["/bin/sh", "-c", OVERLAY, "sh", str(_work(place))]


def shows_copy_at(path: Path) -> bool:
    """Whether a run may see its copy at `path`: the file system mounted at its parent would
    cover neither `/` nor what every run is shown (the system's directories, `/etc`, `/proc`,
    `/dev`, :data:`INSIDE`)."""
    parent = Path(os.path.abspath(path)).parent
    shown = [Path("/", name) for name in (*SYSTEM, "etc", "proc", "dev")] + [INSIDE]
    return parent != Path("/") and not any(s.is_relative_to(parent) for s in shown)


def mounts(place: Place, limits: Limits) -> list[str]:
    """bubblewrap's options for the run's file system, in order: later mounts go over
    earlier ones."""
    size = ["--size", str(limits.disk_mb * MB)]
    made = _Made()
    args = [*made.system(), *made.etc(), *made.own("--proc", "/proc"), *made.own("--dev", "/dev")]
    args += made.own("--perms", "1777", *size, "--tmpfs", "/tmp")
    args += made.own("--perms", "1777", *size, "--tmpfs", "/dev/shm")
    work = _work(place)
    args += made.directories(work.parent)
    args += made.own("--perms", "1777", *size, "--tmpfs", str(work.parent))
    for source, seen in place.read_only:
        where = Path(os.path.abspath(seen))
        if not where.is_relative_to(work):
            args += made.bind(source.resolve(), where)
    for source, mounted in _environments(place):
        args += made.bind(source.resolve(), mounted)
    for shown, inside in ((place.tree, TREE), (place.additions, ADDITIONS)):
        if shown is not None:
            args += made.bind(shown.resolve(), inside)
    if place.tree is not None:
        args += made.own("--perms", "0700", *size, "--tmpfs", str(LAYER))
    if place.keep is not None:
        args += [*made.directories(KEEP), "--bind", str(place.keep.resolve()), str(KEEP)]
    return args + made.hide([p.resolve() for p in place.hidden], work)


class _Made:
    """The mounts made so far, for what goes over them."""

    def __init__(self) -> None:
        self.binds: list[tuple[Path, Path]] = []
        """(source, destination) of each read-only bind mount of the host's."""
        self._made = {Path("/")}

    def system(self) -> list[str]:
        args: list[str] = []
        for name in SYSTEM:
            path = Path("/", name)
            if path.is_symlink():
                args += ["--symlink", os.readlink(path), str(path)]
            elif path.is_dir():
                args += self.bind(path, path)
        return args

    def etc(self) -> list[str]:
        args = ["--perms", "0755", "--dir", "/etc"]
        self._made.add(Path("/etc"))
        for name in ETC:
            path = Path("/etc", name)
            if path.exists():
                args += self.bind(path, path)
        return args

    def own(self, *args: str) -> list[str]:
        """A mount of the sandbox's own, at the last of `args`."""
        self._made.add(Path(args[-1]))
        return list(args)

    def bind(self, source: Path, destination: Path) -> list[str]:
        """A read-only bind of `source` at `destination`, unless a bind shows it there
        already (an interpreter in `/usr`)."""
        if source == destination and any(source.is_relative_to(s) for s, d in self.binds if s == d):
            return []
        args = [*self.directories(destination), "--ro-bind", str(source), str(destination)]
        self.binds.append((source, destination))
        self._made.add(destination)
        return args

    def directories(self, destination: Path) -> list[str]:
        """Readable directories down to `destination`, where no mount made them: bubblewrap
        would make them readable by root alone, and nobody could reach what is below."""
        args: list[str] = []
        for ancestor in reversed(destination.parents):
            if ancestor in self._made or any(ancestor.is_relative_to(d) for _, d in self.binds):
                continue
            args += ["--perms", "0755", "--dir", str(ancestor)]
            self._made.add(ancestor)
        return args

    def hide(self, hidden: list[Path], work: Path) -> list[str]:
        """Each of `hidden` that lies inside a bind made empty (a directory, then read-only)
        or unreadable (a file: a device on a mount without devices); not where the run's copy
        is (`work`), its own, where a hidden checkout's path may be the copy's."""
        args: list[str] = []
        emptied: list[str] = []
        sources = [source for source, _ in self.binds]
        for path in hidden:
            for source, destination in self.binds:
                if path == source or not path.is_relative_to(source):
                    continue
                if any(s != source and s.is_relative_to(path) for s in sources):
                    continue  # it holds something shown on purpose (an interpreter)
                if (destination / path.relative_to(source)).is_relative_to(work):
                    continue
                seen = str(destination / path.relative_to(source))
                if path.is_dir():
                    args += ["--tmpfs", seen]
                    emptied.append(seen)
                elif path.exists():
                    args += ["--ro-bind", "/dev/null", seen]
        return args + [arg for seen in emptied for arg in ("--remount-ro", seen)]


def _work(place: Place) -> Path:
    return place.work.resolve()


def _inside_work(place: Place) -> list[tuple[Path, Path]]:
    """The directories the place shows inside the copy: (where they are, their path in it)."""
    work = _work(place)
    return [
        (source, Path(os.path.abspath(seen)).relative_to(work))
        for source, seen in place.read_only
        if Path(os.path.abspath(seen)).is_relative_to(work)
    ]


def _environments(place: Place) -> list[tuple[Path, Path]]:
    """Each directory shown inside the copy, and where it is mounted to be linked to."""
    return [(source, ENVIRONMENTS / str(i)) for i, (source, _) in enumerate(_inside_work(place))]


def _linked(place: Place) -> list[tuple[Path, Path]]:
    """Each directory shown inside the copy: its path there, and the mount it links to."""
    mounted = [inside for _, inside in _environments(place)]
    return [(name, inside) for (_, name), inside in zip(_inside_work(place), mounted, strict=True)]
