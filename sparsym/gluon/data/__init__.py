"""Gluon data loading: datasets, samplers and DataLoader (mx.gluon.data)."""
from . import dataloader, dataset, sampler  # noqa: F401
from .dataloader import DataLoader  # noqa: F401
from .dataset import ArrayDataset, Dataset, RecordFileDataset, SimpleDataset  # noqa: F401
from .sampler import (BatchSampler, FilterSampler, IntervalSampler,  # noqa: F401
                      RandomSampler, Sampler, SequentialSampler)
from . import vision  # noqa: F401,E402  (mx.gluon.data.vision)
