"""Stage 4, track: ByteTrack-style tracking of the physical detector's boxes."""
