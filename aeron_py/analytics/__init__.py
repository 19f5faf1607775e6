"""PySpark analytics of Echo 2.0 server telemetry.

Run ``python -m aeron_py.analytics --help``. Modules: :mod:`.session` (SparkSession),
:mod:`.schema` (event schema), :mod:`.rules` (abuse rules), :mod:`.job` (the job),
:mod:`.report` (plots, HTML), :mod:`.generate` (synthetic telemetry).
Importing this package does not import PySpark.
"""
