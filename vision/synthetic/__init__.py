"""The synthetic table: scenes with exact truth, their rendering under randomised light and
camera, and procedurally drawn tile packs; the demo's camera and the learning tables."""
