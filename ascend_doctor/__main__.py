"""`python -m ascend_doctor` runs the command-line interface."""

from ascend_doctor.cli.entry import main

if __name__ == "__main__":
    main()
