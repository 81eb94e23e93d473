"""The "Train your own" page's logic, without torch: `session` (TrainingSession: one browser session's files, runs
and checked upload, and each run's lifecycle slot -> worker -> export -> serve -> stop -> cleanup), `processes` (the
child processes, started as modules), `slot` (one training per server, first come first served), `live` (the views
drawn while something runs), `runs` (run records and model sizes), `files` (a session's folder, downloads),
`figures` (curves and attention maps) and `widgets` (what the page draws). `runs`, `files` and `figures` import no
Streamlit. The contract shared with tx.toy (upload limits and checks, reserved tokens, direction, size cap) is
runtime.toy."""
