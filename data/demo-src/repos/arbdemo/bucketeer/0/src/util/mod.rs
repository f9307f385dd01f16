pub mod duration;
