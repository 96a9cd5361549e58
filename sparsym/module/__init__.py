"""Modules: Module, BucketingModule, SequentialModule and the executor group."""
from .base_module import BaseModule  # noqa: F401
from .bucketing_module import BucketingModule  # noqa: F401
from .executor_group import DataParallelExecutorGroup  # noqa: F401
from .module import Module  # noqa: F401
from .python_module import PythonLossModule, PythonModule  # noqa: F401
from . import python_module  # noqa: F401
from .sequential_module import SequentialModule  # noqa: F401
