"""Entry points: the ``ves`` command line and the process supervisor behind ``make run``."""
