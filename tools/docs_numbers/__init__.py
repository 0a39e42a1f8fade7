"""Every computed number of the README and docs, produced by one registry.

The Markdown marks each computed number, so that none can go stale:

* `<!-- value: KEY -->0.6237<!-- /value -->`: one number (or short text),
  `VALUES[KEY]` of this package, formatted as registered;
* `<!-- table: KEY -->` ... `<!-- /table -->`: a whole table, `TABLES[KEY]`
  (`<!-- output: KEY -->` ... `<!-- /output -->`: a program's printed output);
* in a ```python block, `print(...)  # 0.6237 ...`: the comment's leading
  number is what that print shows, at the comment's significant digits.

The tolerance is the rounding shown: the page must equal the code's value
formatted to the page's digits (half a unit of the last digit shown). Wall
times are not generated (the benchmarks print them). Numbers that are not
computed results (parameters, years, the papers' own printed values,
timings) are exempt; `--inventory` lists every
result-like number of a page that no marker covers, and `EXEMPT` names the
ones that are recognisably not ours or pinned by a test (tests/docs/
test_numbers.py checks that every page's list is empty).

  python -m tools.docs_numbers              rewrite every marked number
  python -m tools.docs_numbers --fast       only those that take seconds
  python -m tools.docs_numbers --check      compare only; exit 1 if stale
  python -m tools.docs_numbers --inventory  result-like numbers not covered

Each docs page has its module here (`checkin.py` registers the numbers of
docs/checkin.md, `readme.py` those of README.md); `core.py` holds the
registry and the formatting, `marks.py` finds, rewrites and checks the
marked numbers of a page. Run it from the repository's root.
"""

# Importing a page's module registers its numbers.
from . import checkin
from . import cli
from . import dap
from . import errata
from . import federated
from . import limits
from . import mathematics
from . import numeric
from . import opacus
from . import performance
from . import pld_accountant
from . import randomizers
from . import rdp_accountant
from . import readme
from . import results
from . import samplers
from . import secure_sums
from . import sums
from . import tf_privacy
from . import training
from .core import PAGES
from .core import TABLE_MARK
from .core import TABLES
from .core import VALUE_MARK
from .core import VALUES
from .core import sig
from .core import tables_agree
from .marks import EXEMPT
from .marks import markers
from .marks import printed_values
from .marks import stale
from .marks import unmarked_numbers

PAGE_MODULES = (checkin, cli, dap, errata, federated, limits, mathematics,
                numeric, opacus, pld_accountant, performance, randomizers,
                rdp_accountant, readme, results, samplers, tf_privacy,
                training)

__all__ = ['EXEMPT', 'PAGES', 'PAGE_MODULES', 'TABLES', 'TABLE_MARK',
           'VALUES', 'VALUE_MARK', 'markers', 'printed_values', 'sig',
           'stale', 'tables_agree', 'unmarked_numbers']
