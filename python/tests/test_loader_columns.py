"""lakerun.Loader's per-column options: images decoded and transformed on the loader's threads (a table made by
`lakerun table import images` from PNG files written here), and null policies (a table with empty CSV fields)."""

from __future__ import annotations

import pathlib
import struct
import subprocess
import zlib

import pytest
import torch

import lakerun
from conftest import import_csv, lakerun_bin


def write_png(path: pathlib.Path, pixels: list) -> None:
    """An 8-bit greyscale PNG of `pixels` (rows of ints 0..255)."""
    height, width = len(pixels), len(pixels[0])

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + bytes(row) for row in pixels)  # filter type 0 per row
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) +
                     chunk(b"IEND", b""))


@pytest.fixture(scope="module")
def image_table(tmp_path_factory: pytest.TempPathFactory) -> str:
    """8 images of 6 x 4 pixels in two classes; image k's pixel (y, x) is 10 k + y (so its row means tell it)."""
    root = tmp_path_factory.mktemp("images")
    for k in range(8):
        folder = root / "in" / ("even" if k % 2 == 0 else "odd")
        folder.mkdir(parents=True, exist_ok=True)
        write_png(folder / f"img{k}.png", [[10 * k + y] * 4 for y in range(6)])
    out = root / "t"
    subprocess.run([lakerun_bin(), "table", "import", "images", str(root / "in"), str(out), "--no-progress"],
                   check=True, stdout=subprocess.DEVNULL)
    return str(out)


def test_images_are_decoded_cropped_and_scaled_on_the_loaders_threads(image_table: str) -> None:
    image = "image"  # the column `lakerun table import images` writes, beside "label"
    assert image in [name for name, _ in lakerun.Table(image_table).schema]
    loader = lakerun.Loader(image_table, columns=[image], batch_size=8, shuffle=False,
                            images={image: {"channels": 1, "crop": (4, 2), "to_float": True}})
    batch = next(iter(loader))
    pictures = batch[image]
    assert pictures.shape == (8, 1, 4, 2)
    assert pictures.dtype == torch.float32
    # A centred crop keeps rows 1..4 of 0..5; each picture's first row is (10 k + 1) / 255 for some k.
    firsts = sorted(round(v * 255) % 10 for v in pictures[:, 0, 0, 0].tolist())
    assert firsts == [1] * 8
    assert torch.allclose(pictures[:, 0, 1, 0] - pictures[:, 0, 0, 0], torch.full((8,), 1 / 255))

    uint8 = lakerun.Loader(image_table, columns=[image], batch_size=4, shuffle=False,
                           images={image: {"channels": 3, "crop": 4}})
    first = next(iter(uint8))[image]
    assert first.shape == (4, 3, 4, 4) and first.dtype == torch.uint8
    assert torch.equal(first[:, 0], first[:, 2])  # grey pictures: equal channels


def test_image_settings_are_checked_by_name(image_table: str) -> None:
    with pytest.raises(lakerun.InvalidArgument, match=r"images\['image'\]: unknown setting 'size'.*channels"):
        lakerun.Loader(image_table, columns=["image"], images={"image": {"size": 3}})
    with pytest.raises(lakerun.InvalidArgument, match=r"images\['image'\]\['channels'\]: 'one'"):
        lakerun.Loader(image_table, columns=["image"], images={"image": {"channels": "one"}})


@pytest.fixture(scope="module")
def table_with_nulls(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("nulls") / "rows.csv"
    path.write_text("id,x\n0,0.5\n1,\n2,2.5\n3,\n")
    return str(import_csv(path, path.parent / "t"))


def test_a_null_policy_fills_and_masks_and_without_one_a_null_is_named(table_with_nulls: str) -> None:
    loader = lakerun.Loader(table_with_nulls, columns=["id", "x"], batch_size=4, shuffle=False,
                            nulls={"x": {"fill_value": -1.0}})
    batch = next(iter(loader))
    by_id = dict(zip(batch["id"].tolist(), zip(batch["x"].tolist(), batch["x.valid"].tolist())))
    assert by_id == {0: (0.5, True), 1: (-1.0, False), 2: (2.5, True), 3: (-1.0, False)}

    unmasked = lakerun.Loader(table_with_nulls, columns=["x"], batch_size=4, shuffle=False,
                              nulls={"x": {"emit_mask": False}})
    assert set(next(iter(unmasked))) == {"x"}

    with pytest.raises(lakerun.InvalidArgument, match="'x'"):
        next(iter(lakerun.Loader(table_with_nulls, columns=["x"], batch_size=4, shuffle=False)))
