"""`python -m client` is the `proofq` command."""

from client.cli import main

main()
