"""The tests' time limits scale with the machine's load (``tests.timing``): pytest's limit
of each test is its idle value times the factor the session started with."""

from __future__ import annotations

import pytest

from tests.timing import TEST_TIMEOUT_S, scaled


def test_a_plain_test_gets_the_default_limit_scaled(request):
    assert request.node.get_closest_marker("timeout").args[0] == scaled(TEST_TIMEOUT_S)


@pytest.mark.timeout(30)
def test_a_tests_own_limit_is_scaled_too(request):
    assert request.node.get_closest_marker("timeout").args[0] == scaled(30)
