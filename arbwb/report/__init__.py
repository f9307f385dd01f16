"""The batch report: notebooks run by papermill, the HTML index, the recorder."""
