#!/usr/bin/env bash
# The README's Raspberry Pi steps 1 and 2, as written, in an emulated 64-bit Debian bookworm:
# a root made by debootstrap --arch=arm64 and run by qemu-user-static, both from Debian's
# packages. Raspberry Pi's own packages (python3-picamera2, python3-lgpio) are not in Debian:
# apt's python3-numpy and python3-scipy stand in, scipy being, like picamera2's simplejpeg,
# built against apt's numpy 1.x. Then the checks:
#   - numpy is still apt's (1.24.2, from /usr/lib/python3/dist-packages), and scipy imports;
#   - `companion score examples/rulebook-37.json` gives Ana 37;
#   - `companion read` reads a table the renderer drew with a synthetic tile pack.
#
# Run by hand as root on a Debian or Ubuntu machine (x86_64) with network to Debian's mirror
# and PyPI:  sudo scripts/pi-smoke.sh   (PI_SMOKE_DIR: where the root goes, /var/tmp/pi-smoke;
# kept between runs, so a second run skips debootstrap; PI_SMOKE_FRESH=1 starts over).
# It installs debootstrap, qemu-user-static and binfmt-support on the machine if missing.
# Not part of CI: on the 2-core development machine, shared with other work, making the
# arm64 root with Python and scipy took 31 min and the steps and checks after it 10 min
# (`time sudo PI_SMOKE_FRESH=1 scripts/pi-smoke.sh`; it prints each part's time), nearly
# half of CI's 90 min and at the mercy of the mirror and the machine's load.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${PI_SMOKE_DIR:-/var/tmp/pi-smoke}"
root="$work/root"
mirror="${PI_SMOKE_MIRROR:-http://deb.debian.org/debian}"

say() { printf 'pi-smoke: %s\n' "$*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

[ "$(id -u)" = 0 ] || { say "run as root (sudo scripts/pi-smoke.sh)."; exit 2; }

missing=()
command -v debootstrap >/dev/null || missing+=(debootstrap)
[ -e /usr/bin/qemu-aarch64-static ] || missing+=(qemu-user-static)
command -v update-binfmts >/dev/null || missing+=(binfmt-support)
if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64 \
    || { say "arm64 programs cannot run here (no binfmt_misc for qemu-aarch64)."; exit 2; }

if [ "${PI_SMOKE_FRESH:-0}" = 1 ]; then
    umount -R "$root/proc" "$root/sys" "$root/dev" 2>/dev/null || true
    rm -rf "$root"
fi
mkdir -p "$work"
start=$(date +%s)
if [ ! -x "$root/usr/bin/apt-get" ] || [ ! -f "$work/.bootstrapped" ]; then
    say "debootstrap bookworm arm64 into $root"
    rm -rf "$root"
    debootstrap --arch=arm64 --variant=minbase --include=ca-certificates bookworm "$root" "$mirror"
    touch "$work/.bootstrapped"
fi
say "root ready after $(( $(date +%s) - start )) s"

cleanup() {
    for m in dev/pts dev sys proc; do umount "$root/$m" 2>/dev/null || true; done
}
trap cleanup EXIT
mount -t proc proc "$root/proc"
mount --bind /sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# A machine that reaches PyPI through its own certificate authority: the same bundle.
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
echo "deb $mirror bookworm main" > "$root/etc/apt/sources.list"

# A clean environment, as on a fresh Pi (no pip settings of this machine).
pi() {
    local keep=()
    for name in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
        [ -n "${!name:-}" ] && keep+=("$name=${!name}")
    done
    chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "${keep[@]}" /bin/bash -euo pipefail -c "$1"
}

say "step 1: system packages (picamera2 and lgpio: numpy and scipy stand in)"
t=$(date +%s)
pi "apt-get update -qq && apt-get install -y -qq python3-numpy python3-scipy python3-venv git >/dev/null"
say "step 1 took $(( $(date +%s) - t )) s"

say "step 2: the project and its venv"
rm -rf "$root/opt/maori-companion"
git clone --quiet "$here" "$root/opt/maori-companion"
t=$(date +%s)
pi 'cd /opt/maori-companion
python3 -m venv --system-site-packages .venv
.venv/bin/pip install --quiet -c constraints/$(. /etc/os-release && echo $VERSION_CODENAME).txt -e .'
say "step 2 took $(( $(date +%s) - t )) s"

say "check: apt's numpy kept, scipy (built for numpy 1.x) still imports"
pi 'cd /opt/maori-companion
.venv/bin/python - <<EOF
import numpy, scipy.ndimage, cv2
assert numpy.__version__ == "1.24.2", numpy.__version__
assert numpy.__file__.startswith("/usr/lib/python3/dist-packages/"), numpy.__file__
print("numpy", numpy.__version__, "scipy", scipy.__version__, "opencv", cv2.__version__)
EOF
if ls .venv/lib/python3.11/site-packages | grep -qi "^numpy"; then
    echo "pip put a numpy into the venv" >&2; exit 1
fi' || fail "the install replaced or broke apt's numpy"

say "check: companion score"
pi 'cd /opt/maori-companion
.venv/bin/companion score examples/rulebook-37.json --json > /tmp/score.json
.venv/bin/python -c "import json; s = json.load(open(\"/tmp/score.json\")); assert s[\"players\"][0][\"total\"] == 37, s"' \
    || fail "companion score"

say "check: companion read on a rendered table"
t=$(date +%s)
pi 'cd /opt/maori-companion
.venv/bin/companion pack synth --style lagoon --out /tmp/pack > /dev/null
.venv/bin/python - /tmp/pack /tmp/table.png <<EOF
import sys

import cv2
import numpy as np

from vision.box.pack import load_pack
from vision.synthetic.render import CameraSpec, Effects, render_table
from vision.synthetic.scene import random_scene

pack = load_pack(sys.argv[1])
rng = np.random.default_rng(1)
scene = random_scene(pack.catalogue, rng, n_seats=2, difficulty="easy")
rendered = render_table(scene, pack, CameraSpec(), Effects.easy(), rng)
if not cv2.imwrite(sys.argv[2], rendered.image):
    sys.exit("could not write the rendered table")
EOF
.venv/bin/companion read /tmp/table.png --pack /tmp/pack --json > /tmp/read.json
.venv/bin/python -c "import json; r = json.load(open(\"/tmp/read.json\")); assert r[\"display\"][\"cells\"], r"' \
    || fail "companion read"
say "read took $(( $(date +%s) - t )) s"
say "passed in $(( $(date +%s) - start )) s"
