"""ascend-doctor: diagnose Huawei Ascend NPU job failures from their logs."""

__version__ = "0.1.0"
