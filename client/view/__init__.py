"""``proofq view``: a page of the cluster's jobs for people who would rather look than read.

Jobs → partitions → phases on a timeline (lock waits shaded, failures in red with their
reasons, a running partition's current phase growing up to now), and each GPU's busy time
(its ``compute`` phases) over the window the events cover.  Everything comes from the job
store (``proofq:jobs``, the job hashes) and ``proofq:events``; the page itself is one
static, self-contained file (``page.html``: no external scripts, styles or fonts) that
reads ``/api/view`` every two seconds.

Served by the standard library's HTTP server, bound to 127.0.0.1 unless told otherwise:
nothing to install, nothing to configure, and it can change nothing in the cluster (it only
reads).
"""
