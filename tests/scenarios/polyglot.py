"""Small real projects beyond Python, under git, whose head brings a bug into code the base has
and adds code with bugs in it: a Go module (standard library only, its tests `_test.go` files
beside their package, run by `go test`) and a Node package (CommonJS, its tests in `test/`,
run by `node --test`). The tests `tiebreak review --verify` runs on them are written as the
projects write theirs.

In each, the head's `total` skips the first price (a regression: the base sums them all), a
new `discounted` divides by 10 where it means 100, and a new package or module's `apply` lets
a coupon larger than the price make it negative. The project's own test (an empty cart costs
nothing) passes at both.
"""

import shutil
from pathlib import Path

import pytest

from agents.diff import Diff
from agents.protocol import Patch, Reproduction
from tests.scenarios.shop import Project, git

needs_go = pytest.mark.skipif(
    shutil.which("go") is None,
    reason="no Go on this machine: install Debian's golang-go package (.ci/run does)",
)
needs_node = pytest.mark.skipif(
    shutil.which("node") is None,
    reason="no Node.js on this machine: install Debian's nodejs package (.ci/run does)",
)

GO_COMMAND = 'go test -count=1 -vet=off "./$(dirname {test})"'
NODE_COMMAND = "node --test {test}"

GO_MOD = "module example.com/shop\n\ngo 1.19\n"
GO_CART_BASE = """\
package shop

// Total is the sum of the prices.
func Total(prices []int) int {
\tresult := 0
\tfor i := 0; i < len(prices); i++ {
\t\tresult += prices[i]
\t}
\treturn result
}
"""
GO_CART_HEAD = (
    GO_CART_BASE.replace("i := 0;", "i := 1;").replace("of the prices.", "of the prices, in cents.")
    + """
// Discounted is the price with percent off, rounded down.
func Discounted(price, percent int) int {
\treturn price * (100 - percent) / 10
}
"""
)
GO_COUPONS = """\
package coupons

// Apply is the price with the coupon's amount off, never below zero.
func Apply(price, coupon int) int {
\treturn price - coupon
}
"""
GO_OWN_TEST = """\
package shop

import "testing"

func TestAnEmptyCartCostsNothing(t *testing.T) {
\tif got := Total(nil); got != 0 {
\t\tt.Fatalf("Total(nil) = %d, want 0", got)
\t}
}
"""
GO_TOTAL_LINE, GO_DISCOUNT_LINE, GO_COUPON_LINE = 6, 14, 5

GO_TOTAL_TEST = Reproduction(
    path="shop/total_test.go",
    content=(
        'package shop\n\nimport "testing"\n\nfunc TestTotalCountsEveryPrice(t *testing.T) {\n'
        '\tif got := Total([]int{5, 7}); got != 12 {\n\t\tt.Fatalf("Total = %d, want 12", got)\n'
        "\t}\n}\n"
    ),
)
GO_DISCOUNT_TEST = Reproduction(
    path="shop/discounted_test.go",
    content=(
        'package shop\n\nimport "testing"\n\nfunc TestTenPercentOff(t *testing.T) {\n'
        '\tif got := Discounted(100, 10); got != 90 {\n\t\tt.Errorf("Discounted = %d, want 90", '
        "got)\n\t}\n}\n"
    ),
)
GO_COUPON_TEST = Reproduction(
    path="coupons/coupons_test.go",
    content=(
        'package coupons\n\nimport "testing"\n\nfunc TestALargeCouponMakesItFree(t *testing.T) {'
        '\n\tif got := Apply(5, 10); got != 0 {\n\t\tt.Errorf("Apply = %d, want 0", got)\n'
        "\t}\n}\n"
    ),
)
GO_FIXES = (
    Patch(path="shop/cart.go", start_line=GO_TOTAL_LINE, end_line=GO_TOTAL_LINE,
          replacement="\tfor i := 0; i < len(prices); i++ {"),
    Patch(path="shop/cart.go", start_line=GO_DISCOUNT_LINE, end_line=GO_DISCOUNT_LINE,
          replacement="\treturn price * (100 - percent) / 100"),
    Patch(path="coupons/coupons.go", start_line=GO_COUPON_LINE, end_line=GO_COUPON_LINE,
          replacement="\tif coupon > price {\n\t\treturn 0\n\t}\n\treturn price - coupon"),
)  # fmt: skip

NODE_PACKAGE = (
    '{\n  "name": "shop",\n  "version": "1.0.0",\n  "scripts": {"test": "node --test"}\n}\n'
)
NODE_CART_BASE = """\
'use strict';

/** The sum of the prices. */
function total(prices) {
  let result = 0;
  for (let i = 0; i < prices.length; i++) {
    result += prices[i];
  }
  return result;
}

module.exports = { total };
"""
NODE_CART_HEAD = (
    NODE_CART_BASE.replace("let i = 0;", "let i = 1;")
    .replace("of the prices.", "of the prices, in cents.")
    .replace(
        "module.exports = { total };",
        """\
/** The price with percent off, rounded down. */
function discounted(price, percent) {
  return Math.floor((price * (100 - percent)) / 10);
}

module.exports = { total, discounted };""",
    )
)
NODE_COUPONS = """\
'use strict';

/** The price with the coupon's amount off, never below zero. */
function apply(price, coupon) {
  return price - coupon;
}

module.exports = { apply };
"""
NODE_OWN_TEST = """\
const test = require('node:test');
const assert = require('node:assert');
const { total } = require('../src/cart');

test('an empty cart costs nothing', () => {
  assert.strictEqual(total([]), 0);
});
"""
NODE_TOTAL_LINE, NODE_DISCOUNT_LINE, NODE_COUPON_LINE = 6, 14, 5


def node_test(name: str, imported: str, module: str, title: str, check: str) -> Reproduction:
    return Reproduction(
        path=f"test/{name}.test.js",
        content=(
            "const test = require('node:test');\nconst assert = require('node:assert');\n"
            f"const {{ {imported} }} = require('../src/{module}');\n\n"
            f"test('{title}', () => {{\n  assert.strictEqual({check});\n}});\n"
        ),
    )


NODE_TOTAL_TEST = node_test(
    "total", "total", "cart", "total counts every price", "total([5, 7]), 12"
)
NODE_DISCOUNT_TEST = node_test(
    "discounted", "discounted", "cart", "ten percent off", "discounted(100, 10), 90"
)
NODE_COUPON_TEST = node_test(
    "coupons", "apply", "coupons", "a large coupon makes it free", "apply(5, 10), 0"
)
NODE_FIXES = (
    Patch(path="src/cart.js", start_line=NODE_TOTAL_LINE, end_line=NODE_TOTAL_LINE,
          replacement="  for (let i = 0; i < prices.length; i++) {"),
    Patch(path="src/cart.js", start_line=NODE_DISCOUNT_LINE, end_line=NODE_DISCOUNT_LINE,
          replacement="  return Math.floor((price * (100 - percent)) / 100);"),
    Patch(path="src/coupons.js", start_line=NODE_COUPON_LINE, end_line=NODE_COUPON_LINE,
          replacement="  return Math.max(price - coupon, 0);"),
)  # fmt: skip


def make_go_shop(root: Path) -> Project:
    """The Go module at `root` (new), checked out at its head."""
    return _project(
        root / "go-shop",
        {"go.mod": GO_MOD, "shop/cart.go": GO_CART_BASE, "shop/cart_test.go": GO_OWN_TEST},
        {"shop/cart.go": GO_CART_HEAD, "coupons/coupons.go": GO_COUPONS},
    )


def make_node_shop(root: Path) -> Project:
    """The Node package at `root` (new), checked out at its head."""
    return _project(
        root / "node-shop",
        {
            "package.json": NODE_PACKAGE,
            "src/cart.js": NODE_CART_BASE,
            "test/cart.test.js": NODE_OWN_TEST,
        },
        {"src/cart.js": NODE_CART_HEAD, "src/coupons.js": NODE_COUPONS},
    )


def _project(checkout: Path, base: dict[str, str], head: dict[str, str]) -> Project:
    """A project at `checkout` whose first commit holds `base`, and its head `head` over it."""
    checkout.mkdir(parents=True)
    git(checkout, "init", "-q", "-b", "main")
    commits = []
    for files, message in ((base, "The cart sums its prices"), (head, "Discounts and coupons")):
        for path, text in files.items():
            (checkout / path).parent.mkdir(parents=True, exist_ok=True)
            (checkout / path).write_text(text)
        git(checkout, "add", "-A")
        git(checkout, "commit", "-q", "-m", message)
        commits.append(git(checkout, "rev-parse", "HEAD").strip())
    return Project(checkout, commits[0], Diff.parse(git(checkout, "diff", commits[0], "HEAD")))
