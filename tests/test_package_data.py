"""Every file the library reads is package data, found through importlib.resources (never next to the checkout).

The repository's ``data/`` keeps copies of the sample contacts and suppression list for the README, the
notebooks and the command-line examples; the package's copies are the ones the library and the demo read.
"""

from __future__ import annotations

import re
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from sendframe.pricing import DEFAULT_PRICES_PATH, load_prices

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DATA = ROOT / "src" / "sendframe" / "data"


@pytest.mark.parametrize("name", ["contacts.csv", "suppression.csv"])
def test_the_example_copies_in_data_are_identical_to_the_package_data(name):
    shipped = resources.files("sendframe").joinpath("data").joinpath(name).read_bytes()
    assert (ROOT / "data" / name).read_bytes() == shipped, (
        f"data/{name} and src/sendframe/data/{name} differ: edit the package copy and copy it to data/")


def test_the_price_table_is_read_from_the_package_not_the_checkout():
    shipped = resources.files("sendframe").joinpath("data").joinpath("prices.csv")
    assert shipped == DEFAULT_PRICES_PATH
    assert not (ROOT / "data" / "prices.csv").exists()  # one price table, in the package
    assert load_prices().unit_price("34600123456", "sms") == 0.045


def test_every_package_data_file_is_declared_for_the_wheel():
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = settings["tool"]["setuptools"]["package-data"]["sendframe"]
    package = ROOT / "src" / "sendframe"
    for path in package.rglob("*"):
        if path.is_file() and path.suffix not in {".py", ".pyc"} and "__pycache__" not in path.parts:
            relative = path.relative_to(package)
            assert any(relative.match(pattern) for pattern in patterns), f"{relative} is not in package-data {patterns}"


def test_no_module_looks_for_files_beside_the_checkout():
    # ``Path(__file__).parents[n] / "data"`` works only in a checkout; package data goes through importlib.resources
    offenders = [f"{path.relative_to(ROOT)}:{number}"
                 for path in (ROOT / "src" / "sendframe").rglob("*.py")
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
                 if re.search(r"__file__\b.*\bparents?\b", line)]
    assert offenders == []
