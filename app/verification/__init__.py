"""Running findings' tests: the sandbox a run happens in, the trees it runs on, and the
verifier that runs a review's tests at the base and the head."""
