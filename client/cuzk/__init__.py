"""Curio's front door: cuzk's gRPC protocol (``cuzk.v1.ProvingEngine``) served by proofq.

Curio hands every SNARK to one gRPC address (``[Cuzk] Address``); ``proofq grpc`` answers
there, turning each request into a proofq job (docs/curio.md, docs/ARCHITECTURE.md §1):

- ``proving.proto``: cuzk's messages, names and numbers unchanged; ``proving_pb2*.py`` are
  generated from it (grpcio-tools) and committed;
- ``kinds``: each proof kind Curio sends, and what proofq makes of it (a job, or a refusal);
- ``requests``: request ids, job ids and refusals in Redis;
- ``service``: the RPCs; ``cluster``: what GetStatus and GetMetrics read; ``server``: the
  listeners, TLS and the bearer token.
"""
