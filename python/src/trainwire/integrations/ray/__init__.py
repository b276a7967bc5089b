"""Ray integrations: Tune's experiments (`tune`: `TuneSearch`, needs `trainwire[ray]`) and the
driver of a Ray Train job (`train`: `TrainDriver`, needs no Ray import of its own).

This package imports neither, so `trainwire.integrations.ray.train` does not import Tune;
the old paths `trainwire.integrations.ray_tune` and `trainwire.integrations.ray_train` stay.
"""
