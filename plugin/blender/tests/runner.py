"""The runner shared by the headless Blender test scripts.

``main(globals())`` at the end of a test script registers the add-on, runs every ``test_*``
function of the script in definition order (only those whose name contains ``$OVERTONE_TEST``
when it is set), prints ``ok``/``FAIL``/``SKIP`` with the seconds each took, unregisters, and ends
the process with ``os._exit`` (exit status 1 if any test failed): bpy's own teardown at interpreter
exit is slow and can crash after add-on handlers ran.
"""

import os
import sys
import time
import traceback


def run_tests(namespace, skip=(), finish=None):
    """Runs the ``test_*`` functions of ``namespace``; an exception of a type in ``skip`` counts as
    a skip, any other as a failure. ``finish()`` runs after unregistering. Returns the exit
    status (0 all passed, 1 otherwise)."""
    import overtone

    tests = [v for k, v in list(namespace.items()) if k.startswith("test_")]
    only = os.environ.get("OVERTONE_TEST")
    overtone.register()
    failed = 0
    for t in tests:
        if only and only not in t.__name__:
            continue
        t0 = time.perf_counter()
        try:
            t()
            print(f"ok   {t.__name__} ({time.perf_counter() - t0:.1f} s)")
        except tuple(skip) as e:
            print(f"SKIP {t.__name__}: {e}")
        except Exception:
            failed += 1
            print(f"FAIL {t.__name__}")
            traceback.print_exc()
    overtone.unregister()
    if finish is not None:
        finish()
    print(f"{len(tests) - failed} passed, {failed} failed")
    return 1 if failed else 0


def main(namespace, skip=(), finish=None):
    """:func:`run_tests`, then ends the process with its exit status (1 if it raised)."""
    code = 1
    try:
        code = run_tests(namespace, skip, finish)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
