"""Pipeline stages, one folder each, listed in the order a file's run calls them
(``flows/video_file.py``, then ``flows/later_stages.py``).

    decode/       stage.py (open, hash, probe, bound the source), hls.py (segments, SSRF-guarded)
    activity/     stage.py (the map-activity task: a run's gate), map.py (still GOPs from packets
                  and keyframes, at the motion detector's sensitivity); runs right after decode
    sample/       stage.py (decode once, keep sample_fps frames, score scene changes),
                  frames.py (the frame files it writes), text_looks.py (where to read text),
                  gate.py (decode only the activity gate's ranges)
    detect/       stage.py (run the mode's plugins), detectors/ (the plugins, their registry, and
                  models/: the person network's ONNX file with its provenance and licence),
                  text_tracks.py (how long each read text stayed)
    chunk/        stage.py (sample + detect of a long video in chunks on several processes, in
                  place of the two stages above), plan.py (chunk borders), join.py (one run from
                  the chunks' parts), still.py (objects still at a border), window.py (live windows)
    review/       stage.py (the review copy: review.mp4, the video as every browser plays it,
                  copied when H.264, else transcoded; made after detect, before track)
    track/        stage.py, bytetrack.py (the tracker of regions of change), kalman.py,
                  association.py, people.py and people_tracklets.py (people tracked by detection
                  over the whole recording), identities.py (re-identification)
    world_state/  stage.py (objects, zones, events, relations), trajectories.py
    timeline/     stage.py
    evidence/     stage.py (spans, thumbnails, hashes, review notes)
    cost/         stage.py (cost.json), model.py (the estimates' cost model)
    export/       no stage of a run (its own flow, on a published run): stage.py (an evidence
                  bundle), steps.py, select.py, windows.py, copy.py, cut.py, redact.py,
                  credentials.py, bundle.py; verifying one is ``verify/`` (the recipient's
                  side), whose bundle format (``verify/layout.py``) export writes

The order a stage may IMPORT in (``STAGES`` in ``tests/test_layers.py``) is this flow order
with one exception: ``activity`` runs before sample but ranks after detect there, because it
borrows what later stages own: the sample stage's gate (``sample/gate.py``) and glance cells
(``sample/text_looks.py``), and the motion detector's test (``detect/detectors/motion.py``).

Each ``stage.py`` holds the Prefect ``@task`` (I/O, logging, progress) and the pure core that
tests call; the helpers only that stage uses sit beside it. A file directly in ``tasks/`` is
shared by two or more stages: ``detections`` (the detection value type), ``geometry``,
``context`` (what a task knows of its run), ``options`` (what execute may choose) and ``mp4``
(MP4 written with PyAV: the H.264 encoder and stream copy of the review copy and the export's
clips).
``retention`` is no stage of a run: it is the core of the retention sweep flow.

Rules (checked by ``tests/test_layers.py``): a stage imports shared modules, ``storage``,
``verify`` (the bundle format), ``ves`` and EARLIER stages only (evidence may read what sample
wrote, never the reverse); shared modules
import no stage (the detector mode they read is the kernel's, ``ves.detector_mode``); nothing
here imports ``flows``, ``api``, ``ask`` or ``cli``.
"""
