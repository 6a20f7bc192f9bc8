# Mutation testing (tests/mutants/run.sh): one-line bugs from
# tests/mutants/list, each applied alone in a scratch copy of the tree,
# the tier that must catch it run there.
#
#   make mutants         every mutant (MUTANTS="NAME ..." for some): the
#                        score; fails when one survives.  On demand only:
#                        it builds and runs tiers once per mutant.
#   make mutants-check   the list is still current: each FROM found once
#                        in its file (part of make check)

.PHONY: mutants mutants-check
mutants:
	@tests/mutants/run.sh $(MUTANTS)

mutants-check:
	@tests/mutants/run.sh --check

