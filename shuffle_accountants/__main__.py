"""Default scenario: `python -m shuffle_accountants` prints a certified epsilon.

IDs: FMT21-CLONES

A telemetry deployment: 10^6 users report through an eps0 = 1 local
randomizer every round for 1,000 rounds; what does the shuffle model certify?
This is `shuffle-accountant epsilon` with those flags, at the CLI's default
delta (`cli.main.DELTA_RULE`, 1e-7 here), so that the README's first CLI line
prints the same numbers; with arguments, `python -m shuffle_accountants ...`
is the CLI itself.
"""

import sys

from shuffle_accountants.cli import main as cli

DEFAULT_SCENARIO = ('epsilon', '--num-users', '1000000', '--local-epsilon',
                    '1', '--rounds', '1000')


def main() -> int:
  return cli.main(sys.argv[1:] or list(DEFAULT_SCENARIO))


if __name__ == '__main__':
  sys.exit(main())
