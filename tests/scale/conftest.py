"""A distributed LocalCluster with two worker processes, shared by the tests of one module."""

from __future__ import annotations

import pytest

distributed = pytest.importorskip("distributed", reason="sendframe[dask] is not installed")


@pytest.fixture(scope="module")
def dask_client():
    """A Client of a LocalCluster (2 worker processes, 1 thread each, loopback only, no dashboard)."""
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                 dashboard_address=None, memory_limit="2GiB") as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client
