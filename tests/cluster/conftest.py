"""The integration tests' cluster factory (`make_cluster`, on both backends through `backend`) and their
`reached_root` (log messages that got past the prompt), for the prompt's tests here."""

from tests.integration.conftest import make_cluster, reached_root

__all__ = ["make_cluster", "reached_root"]
