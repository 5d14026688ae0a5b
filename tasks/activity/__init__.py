"""The activity gate's map: which stretches of a video are still, from its packets and keyframes."""
