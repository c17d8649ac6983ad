"""The integration tests' cluster factory (`make_cluster`, on both backends through `backend`), for the
prompt's tests here."""

from tests.integration.conftest import make_cluster

__all__ = ["make_cluster"]
