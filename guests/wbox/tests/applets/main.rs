//! Behaviour tests for every wbox applet, run natively against in-memory
//! streams through the library's dispatcher.

mod support;

mod basename_dirname;
mod cat;
mod dispatch;
mod echo;
mod head;
mod nl;
mod rev;
mod seq;
mod sort;
mod tail;
mod tr;
mod uniq;
mod wc;
