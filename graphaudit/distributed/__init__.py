"""Distributed consistency: the weight fingerprints of the ranks of a data-parallel job.

:mod:`~graphaudit.distributed.fingerprint` is the file format (no MindSpore);
:mod:`~graphaudit.distributed.hashing` hashes a network's parameters and exchanges the hashes
across ranks (MindSpore's collectives); :mod:`~graphaudit.distributed.compare` says how
fingerprints differ. Checks GA801 and GA962 and ``graphaudit compare`` read them; the public
face is :mod:`graphaudit.fingerprint`.
"""
