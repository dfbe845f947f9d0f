"""`python -m ascend_doctor` runs the command-line interface."""

from ascend_doctor.entry import main

if __name__ == "__main__":
    main()
