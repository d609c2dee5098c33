# SPDX-License-Identifier: MIT
"""The package imports from the build tree and its exception is the library's."""
import errno

import rtloop


def test_version_is_the_librarys():
    parts = rtloop.__version__.split(".")
    assert len(parts) == 3 and all(p.isdigit() for p in parts), rtloop.__version__


def test_error_is_an_oserror_with_errno():
    assert issubclass(rtloop.Error, OSError)
    e = rtloop.Error(errno.ECONNREFUSED, "RTDE: connection refused")
    assert e.errno == errno.ECONNREFUSED and "refused" in str(e)
