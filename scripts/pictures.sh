#!/usr/bin/env bash
# Renders the README's pictures of the shipped worlds with the headless viewer (software Vulkan
# works): `make pictures`. Each later product adds its own lines here.
#   scripts/pictures.sh OUT_DIR VIEWER PICTURE_DIR
set -euo pipefail
out=${1:-out}
viewer=${2:-target/release/kiln-view}
dir=${3:-docs/pictures}
size=640x360
mkdir -p "$dir"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
chmod 700 "$XDG_RUNTIME_DIR"

shot() { # NAME BAKE CAMERA MODE [extra viewer options]
    local name=$1 bake=$2 camera=$3 mode=$4
    shift 4
    "$viewer" "$out/$bake" --headless --size "$size" --camera "$camera" --mode "$mode" --screenshot "$dir/$name.png" "$@"
    echo "pictures: $dir/$name.png"
}

shot ice_caves-overview ice_caves 16,-4,8,90,-25 lit
shot ice_caves-cave ice_caves 10,12,1.5,0,0 lit --exposure auto
shot ice_caves-ao ice_caves 16,-4,8,90,-25 ao
shot ice_caves-indirect ice_caves 16,-4,8,90,-25 indirect --exposure -1.5
shot ice_caves-lod ice_caves 16,-4,8,90,-25 lod
shot tiny-overview tiny 8,-9,11,90,-38 lit
shot forest-overview forest 8,-3,3.5,90,-25 lit
shot forest-among-trees forest 6,5,1.4,30,-5 lit
shot forest-representation forest 8,-3,3.5,90,-25 trees
shot forest-grass forest 12,10,2.2,200,-20 lit
shot forest-grass-levels forest 12,10,2.2,200,-20 grass
# Water: still pictures at a fixed time of the wave loop, so they are the same every run.
shot coast-overview coast 8,-7,8,90,-40 lit --time 3
shot coast-shore coast 7,3,1.6,150,-25 lit --time 3
shot coast-caustics coast 7,3,1.6,150,-25 caustics --time 3
# A prototype's impostor atlas (level 0 albedo and normal), as `kiln export` writes it.
kiln=$(dirname "$viewer")/kiln
if [ -x "$kiln" ]; then
    atlas=$(mktemp -d)
    "$kiln" export "$out/forest" --impostor 20 --out "$atlas" >/dev/null
    cp "$atlas/impostor-20-albedo.png" "$dir/forest-oak-impostor-albedo.png"
    cp "$atlas/impostor-20-normal.png" "$dir/forest-oak-impostor-normal.png"
    rm -rf "$atlas"
    echo "pictures: $dir/forest-oak-impostor-{albedo,normal}.png"
fi
