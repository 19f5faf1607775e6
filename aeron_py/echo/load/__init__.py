"""Load and attack tools for Echo 2.0 servers, public tools for operators and benchmarks.

* :mod:`.generator` - many concurrent clients against one server, and its command line
  ``python -m aeron_py.echo.load`` (also ``python -m aeron_py.echo_load``);
* :mod:`.hold` - its hold mode: thousands of duologues kept open by one thread;
* :mod:`.flood` - a HELLO flood from many source addresses on real Aeron publications
  (survival tests, the attack benchmark);
* :mod:`.forged` - the same flood as raw forged frames, at the sending process's full rate.
"""
